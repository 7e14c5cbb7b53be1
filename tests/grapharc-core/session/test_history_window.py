"""Readers of a thread's checkpoints read the newest few, not the whole history, on every call.

LangGraph's ``get_state_history`` lists every checkpoint of a thread before it yields one; the
audit scan after each node and the server's ``/state`` and stream rendering used it, so each
turn of a long thread cost more than the last. Counted here: checkpoints the SQLite saver lists.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from session_graphs import register_all

from grapharc.session import SessionManager
from grapharc.session.errors import UnknownCheckpointError
from grapharc.session.history import PAGE, step_of
from grapharc.session.subscribers import Written
from grapharc.sqlite.one_trip_saver import OneTripSqliteSaver


class Listed:
    """How many checkpoint tuples the SQLite savers have listed (sync and async)."""

    count = 0


def _counted(sync_method: Any, async_method: Any, count: Any) -> tuple[Any, Any]:
    """Wrappers of a sync and an async generator method that call ``count()`` per item yielded."""

    def counting(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        for item in sync_method(self, *args, **kwargs):
            if not isinstance(self, OneTripSqliteSaver):  # its ``alist`` reads through ``list``
                count()
            yield item

    async def acounting(self: Any, *args: Any, **kwargs: Any) -> Any:
        async for item in async_method(self, *args, **kwargs):
            count()
            yield item

    return counting, acounting


@pytest.fixture
def listed(monkeypatch: pytest.MonkeyPatch) -> type[Listed]:
    def count() -> None:
        Listed.count += 1

    counting_list, counting_alist = _counted(SqliteSaver.list, OneTripSqliteSaver.alist, count)
    monkeypatch.setattr(SqliteSaver, "list", counting_list)
    monkeypatch.setattr(OneTripSqliteSaver, "alist", counting_alist)
    Listed.count = 0
    return Listed


def _listed_by_turn(turn: Any, turns: int, listed: type[Listed]) -> list[int]:
    counts = []
    for _ in range(turns):
        before = listed.count
        assert turn().status == "completed"
        counts.append(listed.count - before)
    return counts


def _bounded(counts: list[int]) -> bool:
    """Whether the last turns read no more checkpoints than the first ones did: compared as the
    fewest of the last five against the most of the first five, since a scan reads one more when
    LangGraph's background save of a node's writes lands after it (the watermark stays a step
    lower), whichever turn that happens in."""
    return min(counts[-5:]) <= max(counts[:5])


def test_a_turns_audit_scan_reads_as_many_checkpoints_on_a_long_thread_as_on_a_new_one(manager, listed):
    manager.create("chain", thread_id="long")
    counts = _listed_by_turn(lambda: manager.run("long", {}), 25, listed)
    assert _bounded(counts), counts  # the whole history each scan: 25 turns later, ~12x


def test_async_turns_read_a_bounded_window_too(directory, listed):
    amanager = SessionManager(directory)
    register_all(amanager)
    amanager.create("chain", thread_id="long")

    async def turns() -> list[int]:
        counts = []
        for _ in range(25):
            before = listed.count
            assert (await amanager.arun("long", {})).status == "completed"
            counts.append(listed.count - before)
        await amanager.aclose()
        return counts

    counts = asyncio.run(turns())
    assert _bounded(counts), counts


def test_history_windows_are_the_newest_snapshots_of_the_full_history(manager):
    manager.create("chain", thread_id="t")
    for _ in range(3):
        manager.run("t", {})
    full = manager.history("t")
    assert len(full) > 2 * PAGE  # several pages
    ids = [s.config["configurable"]["checkpoint_id"] for s in full]
    for limit in (1, PAGE - 1, PAGE, PAGE + 1, len(full), len(full) + 5):
        window = manager.history("t", limit=limit)
        assert [s.config["configurable"]["checkpoint_id"] for s in window] == ids[:limit]
    for since in sorted({step_of(s) for s in full}):
        window = manager.history("t", since_step=since)
        expected = []
        for snapshot in full:
            if step_of(snapshot) < since:
                break
            expected.append(snapshot.config["configurable"]["checkpoint_id"])
        assert [s.config["configurable"]["checkpoint_id"] for s in window] == expected
    assert manager.history("t", limit=1)[0].values == manager.values("t")


def test_an_async_turn_settles_reading_the_checkpoints_through_the_sync_saver(directory, monkeypatch):
    amanager = SessionManager(directory)
    register_all(amanager)
    amanager.create("chain", thread_id="t")
    reads: list[str] = []
    sync_list = SqliteSaver.list

    def spy(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        # the async saver's reads (``alist``, or a whole scan in one trip) run on its connection's
        # thread, queued behind the node's writes; the sync saver is another connection
        reads.append("async" if isinstance(self, OneTripSqliteSaver) else "sync")
        return sync_list(self, *args, **kwargs)

    monkeypatch.setattr(SqliteSaver, "list", spy)

    async def turn() -> tuple[str, list[str]]:
        try:
            status = (await amanager.arun("t", {})).status
            return status, [e.node for e in amanager.audit("t") if e.kind == "node"]
        finally:
            await amanager.aclose()

    assert asyncio.run(turn()) == ("completed", ["n1", "n2", "n3", "n4"])
    # one async read per node (its scan queues behind the node's writes), and a second when a
    # scan found a step whose writes were not saved yet (CI saw five); settling reads synchronously
    assert 4 <= reads.count("async") <= 8 and "sync" in reads, reads


def test_the_state_at_each_checkpoint_is_the_snapshot_history_lists(manager):
    manager.create("chain", thread_id="t")
    manager.create("chain", thread_id="other")
    for thread in ("t", "other"):
        manager.run(thread, {})
    for snapshot in manager.history("t"):
        at = manager.state_at("t", snapshot.config["configurable"]["checkpoint_id"])
        assert (at.values, at.next, at.metadata, at.created_at) == (
            snapshot.values, snapshot.next, snapshot.metadata, snapshot.created_at)
    foreign = manager.history("other", limit=1)[0].config["configurable"]["checkpoint_id"]
    for missing in ("no-such-checkpoint", "", foreign):  # "": LangGraph would read the newest
        with pytest.raises(UnknownCheckpointError, match="thread 't' has no checkpoint"):
            manager.state_at("t", missing)


def test_history_pages_before_a_checkpoint_join_into_the_full_history(manager):
    manager.create("chain", thread_id="t")
    for _ in range(3):
        manager.run("t", {})
    full = [s.config["configurable"]["checkpoint_id"] for s in manager.history("t")]
    for size in (1, 2, PAGE, PAGE + 1):
        paged, before = [], None
        while page := manager.history("t", limit=size, before=before):
            paged += [s.config["configurable"]["checkpoint_id"] for s in page]
            before = paged[-1]
        assert paged == full, size
    with pytest.raises(UnknownCheckpointError, match="no-such-checkpoint"):
        manager.history("t", limit=2, before="no-such-checkpoint")


def test_a_live_turn_leaves_what_its_scan_read_for_readers_here_until_it_ends(manager):
    manager.create("chain", thread_id="t")
    seen: list[tuple[str, list[str]]] = []

    def watch(kinds: Written) -> None:  # called after each audit write, while the turn is live
        # LangGraph saves a node's writes in a background thread, after it streams the node's
        # update: a scan may miss them and the next one record two nodes at once, so each node
        # recorded since the last call is looked up, not only the newest
        nodes = [e for e in manager.audit("t") if e.kind == "node"]
        for entry in nodes[len(seen):]:
            before = manager.scanned.at("t", entry.step - 1)
            seen.append((entry.node, [task.name for task in before.tasks if task.result is not None]))

    assert manager.run("t", {}, on_record=watch).status == "completed"
    assert ("n1", ["n1"]) in seen and ("n4", ["n4"]) in seen
    assert manager.scanned.at("t", 0) is None  # forgotten once the turn ended


class Prepared:
    """Snapshots LangGraph prepared for history readers, the checkpoints with values the audit scans
    kept, and those they kept without values (``Named``: tasks named from the tuple)."""

    def __init__(self) -> None:
        self.prepared = 0
        self.kept = 0
        self.unprepared = 0


@pytest.fixture
def prepared(monkeypatch: pytest.MonkeyPatch) -> Prepared:
    from langgraph.pregel import Pregel

    from grapharc.session.named import Named
    from grapharc.session.scanned import ScannedCheckpoints

    tally = Prepared()
    keep = ScannedCheckpoints.keep

    def count() -> None:
        tally.prepared += 1

    counting_history, counting_ahistory = _counted(Pregel.get_state_history, Pregel.aget_state_history, count)

    def counting_keep(self: Any, thread_id: str, history: Any) -> None:
        history = list(history)
        valueless = [isinstance(snapshot, Named) and snapshot.values is None for snapshot in history]
        tally.unprepared += sum(valueless)
        tally.kept += valueless.count(False)
        keep(self, thread_id, history)

    monkeypatch.setattr(Pregel, "get_state_history", counting_history)
    monkeypatch.setattr(Pregel, "aget_state_history", counting_ahistory)
    monkeypatch.setattr(ScannedCheckpoints, "keep", counting_keep)
    return tally


def test_a_turns_audit_scans_have_no_snapshot_prepared_only_to_be_dropped(manager, directory, prepared):
    # preparing a snapshot (LangGraph works out its tasks and values) is most of a scan's cost;
    # each scan used to prepare the checkpoint below its window too, only to see its step
    manager.create("chain", thread_id="t")
    for _ in range(3):
        assert manager.run("t", {}).status == "completed"
    # a sync scan names the tasks of the checkpoints it reads from their saved tuples (``Named``):
    # LangGraph prepares no snapshot for it at all
    assert prepared.prepared == prepared.kept == 0 < prepared.unprepared

    amanager = SessionManager(directory)
    register_all(amanager)
    amanager.create("chain", thread_id="a")

    async def turns() -> None:
        try:
            for _ in range(3):
                assert (await amanager.arun("a", {})).status == "completed"
        finally:
            await amanager.aclose()

    prepared.prepared = prepared.kept = 0
    asyncio.run(turns())
    # for a values reader (the default) its scans name each checkpoint with its values: still no
    # snapshot prepared (one per checkpoint kept before)
    assert prepared.kept > 0 and prepared.prepared == 0


def test_an_async_turn_no_values_reader_waits_on_prepares_no_snapshot(directory, prepared):
    # a run whose stream renders no values (the worker says so in its options) needs no state after
    # each node from the scans: they only name the checkpoints' tasks, and the trail records the
    # same nodes as a turn whose scans read the values too for a values reader (without a snapshot
    # prepared either way)
    from grapharc.session.turn_options import TurnOptions

    amanager = SessionManager(directory)
    register_all(amanager)
    kept: dict[bool, int] = {}

    async def turns() -> None:
        try:
            for values_read in (True, False):
                amanager.create("chain", thread_id=f"t{values_read}")
                prepared.kept = 0
                options = TurnOptions(values_read=values_read)
                session = await amanager.arun(f"t{values_read}", {}, options=options)
                assert session.status == "completed"
                kept[values_read] = prepared.kept
        finally:
            await amanager.aclose()

    asyncio.run(turns())
    assert kept[False] == 0 < kept[True]
    assert prepared.prepared == 0

    def nodes(thread: str) -> list[tuple[str, int | None]]:
        reader = SessionManager(directory)
        try:
            return [(e.node or "", e.step) for e in reader.audit(thread) if e.kind == "node"]
        finally:
            reader.close()

    assert nodes("tTrue") == nodes("tFalse") != []


def test_a_checkpoint_a_scan_only_named_is_never_given_to_a_values_reader():
    # a scan that only names a checkpoint's tasks (``Named``) reads no values: a reader wanting them
    # is sent to disk, and such a checkpoint never replaces a prepared one of the same step
    from types import SimpleNamespace

    from grapharc.session.named import Named
    from grapharc.session.scanned import ScannedCheckpoints

    scanned = ScannedCheckpoints()
    task = SimpleNamespace(name="n1", id="x", result={"a": 1})
    tasked = Named(None, None, {"step": 1}, (task,))
    scanned.keep("t", [tasked, Named(None, None, {"step": 2})])
    assert scanned.at("t", 1) is tasked and scanned.at("t", 1, values=True) is None
    assert scanned.at("t", 2) is None  # nothing named: nothing kept
    prepared = SimpleNamespace(metadata={"step": 1}, tasks=(task,), values={"a": 1})
    scanned.keep("t", [prepared])
    scanned.keep("t", [tasked])
    assert scanned.at("t", 1, values=True) is prepared
    valued = Named(None, None, {"step": 1}, (task,), {"a": 2})  # named with its values
    scanned.keep("t", [valued])
    scanned.keep("t", [tasked])
    assert scanned.at("t", 1, values=True) is valued
