"""The wake-ups streams and joins wait on are per thread: a run's progress wakes only the waiters
on its own thread, so 200 open streams are not all woken for every node of every run."""

from __future__ import annotations

import asyncio

from grapharc.server.api.progress import Progress


def test_progress_on_one_thread_wakes_its_waiters_and_no_others() -> None:
    async def scenario() -> None:
        progress = Progress()
        mine, other = progress.changed("mine"), progress.changed("other")
        assert progress.changed("mine") is mine  # waiters taken before the same progress share it
        progress.watcher("mine")()
        assert mine.is_set() and not other.is_set()
        assert progress.changed("mine") is not mine  # the next waiter waits for the next progress

    asyncio.run(scenario())

