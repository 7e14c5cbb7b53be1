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



def test_a_watcher_called_from_another_thread_wakes_its_waiter_through_the_loop() -> None:
    """An ``asyncio.Event`` set off its loop's thread can lose its waiter for good (a stream then
    waited for its fallback poll, and a test for an hour); the watcher hands the wake-up to the
    loop. The debug loop refuses any unsafe call from another thread, so the old way fails here."""
    async def scenario() -> bool:
        progress = Progress()
        waiting = asyncio.ensure_future(progress.changed("mine").wait())
        await asyncio.sleep(0)  # the waiter is waiting
        await asyncio.to_thread(progress.watcher("mine"))
        return await asyncio.wait_for(waiting, timeout=60)

    assert asyncio.run(scenario(), debug=True)
