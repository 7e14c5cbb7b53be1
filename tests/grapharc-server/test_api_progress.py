"""The wake-ups streams and joins wait on are per thread: a run's progress wakes only the waiters
on its own thread, so 200 open streams are not all woken for every node of every run."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any, cast

import pytest

from grapharc.runs.records import RunRecord
from grapharc.server.api import streaming
from grapharc.server.api.progress import RUN_BEGAN, Change, Progress
from grapharc.server.api.streaming import RENDERED, _render
from grapharc.session.records import AuditEntry, AuditKind
from grapharc.session.subscribers import CLAIM_ENTRIES, NODE_ENTRIES, RUN_ENTRY
from grapharc.testing.run_store_kit import new_run


def test_progress_on_one_thread_wakes_its_waiters_and_no_others() -> None:
    async def scenario() -> None:
        progress = Progress()
        mine, other = progress.changed("mine"), progress.changed("other")
        assert progress.changed("mine") is mine  # waiters taken before the same progress share it
        progress.watcher("mine")(None)
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
        await asyncio.to_thread(progress.watcher("mine"), None)
        return await asyncio.wait_for(waiting, timeout=60)

    assert asyncio.run(scenario(), debug=True)


def test_a_change_says_the_kinds_written_while_it_was_the_threads() -> None:
    async def scenario() -> None:
        progress = Progress()
        mine = progress.changed("mine")
        progress.notify("mine", frozenset({"claimed"}))
        progress.notify("mine", frozenset({"run"}))  # before any waiter took the next: it is mine too
        assert mine.kinds == {"claimed", "run"}
        assert mine.said_none_of(frozenset({"node"})) and not mine.said_none_of(frozenset({"run"}))
        assert not mine.said_none_of(None)  # None: a stream rendering every kind
        progress.notify("mine", None)
        assert not mine.said_none_of(frozenset({"node"}))  # a write that did not say may be anything
        assert not progress.changed("other").said_none_of(frozenset({"node"}))  # not set: a poll's end

    asyncio.run(scenario())


def test_a_waiter_letting_a_change_pass_sees_every_write_after_it_though_others_took_changes() -> None:
    """The change after a set one is the one the next waiter took, linked to it: a stream that lets
    ``mine`` pass (its writes rendered nothing) would otherwise wait on a fresh change and miss the
    node written into another waiter's."""
    async def scenario() -> None:
        progress = Progress()
        mine = progress.changed("t")
        progress.notify("t", frozenset({"claimed"}))
        joins = progress.changed("t")  # a join on the same thread waits for the next progress
        progress.notify("t", frozenset({"node"}))
        progress.changed("t")  # and waits again
        following = progress.following("t", mine)
        assert following is joins and following.kinds == {"node"}

    asyncio.run(scenario())


def test_an_entry_of_a_kind_a_mode_does_not_list_as_rendered_sends_nothing_there() -> None:
    """What lets a stream skip a wake-up's read: ``RENDERED`` names every kind its mode renders."""
    for mode, rendered in RENDERED.items():
        for kind in {*AuditKind, RUN_ENTRY} - rendered:
            for detail in ({}, {"turn": "start"}):
                entry = AuditEntry(seq=2, thread_id="t", at=1.0, kind=kind, node="n", step=1, detail=detail)
                assert _render(mode, entry, {}) is None, (mode, kind)


class Reads:
    """``streaming._read`` replaced: each read noted, the run found ended (the stream then ends)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.runs: list[RunRecord] = []
        monkeypatch.setattr(streaming, "_read", self)

    def __call__(self, ctx: Any, run: RunRecord, *_args: Any) -> Any:
        self.runs.append(run)
        return dataclasses.replace(run, status="success", after_seq=1, end_seq=1), (1, 3), [], {}, []


def _stream(progress: Progress, queued: Change | None) -> AsyncIterator[dict[str, Any]]:
    """The ``updates`` stream of a run just queued (pending, not begun) on thread ``t``."""
    ctx = SimpleNamespace(progress=progress, reads_on_loop=True, manager=SimpleNamespace(changes=None),
                          worker=SimpleNamespace(name="here"))
    return streaming._events(cast(Any, ctx), new_run("t"), ["updates"], None, False, 0, queued)


async def _drained(events: AsyncIterator[dict[str, Any]]) -> list[dict[str, Any]]:
    return [event async for event in events]


def test_a_stream_of_a_run_it_just_queued_reads_first_what_may_send_an_event(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The route takes the thread's change before it adds the run: the stream reads nothing while
    it is queued, as it begins here (from then on waiting as for a run executing here, not with a
    pending run's poll) and as its turn claims the thread, and first reads for its first node."""
    reads = Reads(monkeypatch)
    monkeypatch.setattr(streaming, "POLL_SECONDS", 0.01)  # a pending run's poll: far shorter than the waits

    async def scenario() -> None:
        progress = Progress()
        events = _stream(progress, progress.changed("t"))
        assert (await anext(events))["event"] == "metadata"
        rest = asyncio.ensure_future(_drained(events))
        progress.notify("t", RUN_BEGAN)
        await asyncio.sleep(0.05)
        progress.notify("t", CLAIM_ENTRIES)
        await asyncio.sleep(0.05)
        assert reads.runs == []
        progress.notify("t", NODE_ENTRIES)
        assert [e["event"] for e in await rest] == ["end"]
        assert len(reads.runs) == 1

    asyncio.run(scenario())


def test_a_stream_of_a_run_it_did_not_queue_reads_it_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    reads = Reads(monkeypatch)

    async def scenario() -> None:
        events = _stream(Progress(), None)
        assert [e["event"] for e in await _drained(events)] == ["metadata", "end"]
        assert len(reads.runs) == 1

    asyncio.run(scenario())
