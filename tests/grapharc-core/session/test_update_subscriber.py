"""A turn's update subscriber is shown each node's writes after they are saved; one that raises
is dropped for the rest of the turn and cannot fail the node or the turn."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import pytest
from session_graphs import Ledger

from grapharc import GraphARC
from grapharc.runtime.graph import END, START
from grapharc.session import SessionManager
from grapharc.session.subscribers import Written


class Breaks:
    """A subscriber that records what it is shown and raises on the first node."""

    def __init__(self) -> None:
        self.shown: list[str] = []

    def __call__(self, node: str, update: dict[str, Any]) -> None:
        self.shown.append(node)
        raise RuntimeError("subscriber broke")


def _finished_cleanly(manager: SessionManager, thread_id: str) -> None:
    session = manager.get(thread_id)
    assert session.status == "completed"
    assert manager.values(thread_id)["log"] == ["n1", "n2", "n3", "n4"]
    trail = manager.audit(thread_id)
    # by step: a node whose writes LangGraph had not saved yet when a scan looked is recorded by a
    # later scan, so under load the trail may hold n1 after n3 (each node is still there once)
    assert sorted((e.step, e.node) for e in trail if e.kind == "node") == [
        (1, "n1"), (2, "n2"), (3, "n3"), (4, "n4")]
    assert "failed" not in {e.kind for e in trail}


def test_a_subscriber_that_raises_cannot_fail_a_sync_turn(manager: SessionManager,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    subscriber = Breaks()
    with caplog.at_level(logging.WARNING, logger="grapharc.session.subscribers"):
        session = manager.start("chain", thread_id="sync-sub", on_update=subscriber)
    assert session.status == "completed"
    assert subscriber.shown == ["n1"]  # dropped after it raised
    assert "subscriber raised on node n1" in caplog.text
    _finished_cleanly(manager, "sync-sub")


def test_a_subscriber_that_raises_cannot_fail_an_async_turn(manager: SessionManager) -> None:
    subscriber = Breaks()

    async def scenario() -> None:
        await manager.astart("chain", thread_id="async-sub", on_update=subscriber)
        await manager.aclose()

    asyncio.run(scenario())
    assert subscriber.shown == ["n1"]
    _finished_cleanly(manager, "async-sub")


class Watches:
    """A record watcher that notes the thread's audit trail each time it is called."""

    def __init__(self, manager: SessionManager, thread_id: str, *, breaks: bool = False) -> None:
        self.manager, self.thread_id, self.breaks = manager, thread_id, breaks
        self.seen: list[list[str]] = []
        self.said: list[Written] = []
        self.threads: set[int] = set()

    def __call__(self, kinds: Written) -> None:
        trail = [e.kind for e in self.manager.audit(self.thread_id)]
        if kinds is not None:  # every entry written since the last call is of a kind it says
            assert set(trail[len(self.seen[-1]) if self.seen else 1:]) <= kinds, (kinds, trail)
        self.said.append(kinds)
        self.seen.append(trail)
        self.threads.add(threading.get_ident())
        if self.breaks:
            raise RuntimeError("watcher broke")


def _called_after_each_write(watcher: Watches) -> None:
    """Each call saw a new write: the claim, nodes as they were audited, the run, the ending."""
    ends = [kinds[-1] for kinds in watcher.seen]
    assert ends[0] == "claimed" and ends[-2:] == ["run", "completed"], watcher.seen
    assert ends.count("node") >= 1, watcher.seen
    assert watcher.seen[-1].count("node") == 4
    assert all(len(a) < len(b) for a, b in zip(watcher.seen, watcher.seen[1:], strict=False)), watcher.seen
    # each call but the ending's says which kinds were written (a stream skips the reads of those
    # its modes never render), and what it says covers every entry written since the one before
    assert None not in watcher.said[:-1], watcher.said


def test_a_record_watcher_is_called_after_each_audit_write_of_a_sync_turn(manager: SessionManager) -> None:
    manager.create("chain", thread_id="sync-rec")
    watcher = Watches(manager, "sync-rec")
    manager.run("sync-rec", {}, on_record=watcher)
    _called_after_each_write(watcher)


def test_a_record_watcher_is_called_after_each_audit_write_of_an_async_turn_on_the_loops_thread(
        manager: SessionManager) -> None:
    """On the loop's thread, the run's record too (written in a store thread): a watcher setting an
    ``asyncio.Event`` from another thread can lose its waiter for good."""
    manager.create("chain", thread_id="async-rec")
    watcher = Watches(manager, "async-rec")

    async def scenario() -> None:
        await manager.arun("async-rec", {}, on_record=watcher)
        await manager.aclose()

    asyncio.run(scenario())
    _called_after_each_write(watcher)
    assert watcher.threads == {threading.get_ident()}


def test_a_record_watcher_that_raises_is_dropped_and_cannot_fail_the_turn(
        manager: SessionManager, caplog: pytest.LogCaptureFixture) -> None:
    manager.create("chain", thread_id="rec-breaks")
    watcher = Watches(manager, "rec-breaks", breaks=True)
    with caplog.at_level(logging.WARNING, logger="grapharc.session.subscribers"):
        manager.run("rec-breaks", {}, on_record=watcher)
    assert len(watcher.seen) == 1 and "record watcher raised" in caplog.text
    _finished_cleanly(manager, "rec-breaks")


def _breaks(state: Ledger) -> dict[str, Any]:
    raise RuntimeError("the node broke")


def _breaking(manager: SessionManager, thread_id: str) -> None:
    """Register a one-node graph whose node raises, and create ``thread_id`` on it."""
    graph = GraphARC(Ledger, name="breaks")
    graph.add_node("breaks", _breaks, writes={"log"})
    graph.add_edge(START, "breaks")
    graph.add_edge("breaks", END)
    manager.register(graph)
    manager.create("breaks", thread_id=thread_id)


def test_a_record_watcher_hears_of_a_sync_turns_failed_ending(manager: SessionManager) -> None:
    _breaking(manager, "sync-fails")
    watcher = Watches(manager, "sync-fails")
    with pytest.raises(RuntimeError, match="the node broke"):
        manager.run("sync-fails", {}, on_record=watcher)
    assert watcher.seen[-1][-1] == "failed", watcher.seen


def test_a_record_watcher_hears_of_an_async_turns_failed_ending_on_the_loops_thread(
        manager: SessionManager) -> None:
    _breaking(manager, "async-fails")
    watcher = Watches(manager, "async-fails")

    async def scenario() -> None:
        try:
            await manager.arun("async-fails", {}, on_record=watcher)
        finally:
            await manager.aclose()

    with pytest.raises(RuntimeError, match="the node broke"):
        asyncio.run(scenario())
    assert watcher.seen[-1][-1] == "failed", watcher.seen
    assert watcher.threads == {threading.get_ident()}
