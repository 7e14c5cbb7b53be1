"""Retention removes finished sessions with their checkpoints and holds, never live ones."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from session_graphs import register_all

from grapharc.session import DurationError, SessionManager, parse_duration
from grapharc.session.retention import count_checkpoints, delete_threads, weight

DAY = 86400.0


class Clock:
    def __init__(self) -> None:
        self.now = 2_000_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def aged(directory):
    clock = Clock()
    made = SessionManager(directory, lease_seconds=5.0, clock=clock)
    register_all(made)
    yield made, clock
    made.close()


def test_prune_removes_old_finished_sessions_and_the_files_shrink(aged):
    manager, clock = aged
    for i in range(60):
        manager.start("chain", {"amount": i}, thread_id=f"old-{i}")
    manager.start("gated", thread_id="old-rejected")
    manager.reject("old-rejected", manager.get("old-rejected").holds[0].approval_id, decider="ana")
    paused = manager.start("interview", thread_id="old-paused")
    manager.create("chain", thread_id="old-running")
    manager.store.claim_start("old-running", runner="elsewhere", ttl=3600 * 24 * 30, now=clock.now,
                              input={}, inbox=None)
    clock.now += 10 * DAY
    manager.start("chain", thread_id="recent")
    before = weight(manager.store, manager.checkpoints)
    held = count_checkpoints(manager.checkpointer, [f"old-{i}" for i in range(60)] + ["old-rejected"])

    report = manager.prune(7 * DAY)

    assert set(report.removed) == {f"old-{i}" for i in range(60)} | {"old-rejected"}
    assert report.bytes_after < report.bytes_before == before
    assert report.checkpoints == held > 61 and report.bytes_freed == before - report.bytes_after
    assert weight(manager.store, manager.checkpoints) == report.bytes_after
    assert {s.thread_id for s in manager.list()} == {"old-paused", "old-running", "recent"}
    saver = manager.checkpointer
    assert saver.get_tuple({"configurable": {"thread_id": "old-3"}}) is None
    assert manager.store.approvals("old-paused") == list(paused.holds)
    done = manager.approve("old-paused", paused.holds[0].approval_id, decider="ana")
    assert done.outcome == "prepare,ask:approved,pay"


def test_prune_keeps_finished_sessions_younger_than_the_cutoff(aged):
    manager, clock = aged
    manager.start("chain", thread_id="young")
    clock.now += 2 * DAY
    assert manager.prune(7 * DAY).removed == ()
    assert manager.get("young").status == "completed"


class PruningSaver(InMemorySaver):
    """A saver offering LangGraph's extended ``prune`` capability, noting each call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def prune(self, thread_ids, *, strategy="keep_latest"):
        self.calls.append(f"prune {sorted(thread_ids)} {strategy}")
        for thread_id in thread_ids:
            super().delete_thread(thread_id)

    def delete_thread(self, thread_id):
        self.calls.append(f"delete {thread_id}")
        super().delete_thread(thread_id)


def test_a_saver_offering_prune_deletes_finished_threads_in_one_batch():
    saver = PruningSaver()
    delete_threads(saver, ["a", "b"])
    delete_threads(saver, [])
    assert saver.calls == ["prune ['a', 'b'] delete"]


def test_a_saver_without_prune_deletes_finished_threads_one_by_one():
    calls: list[str] = []

    class Plain(InMemorySaver):
        def delete_thread(self, thread_id):
            calls.append(thread_id)

    delete_threads(Plain(), ["a", "b"])
    assert calls == ["a", "b"]


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90), ("15m", 900), ("12h", 43200), ("7d", 7 * DAY),
                                               ("2w", 14 * DAY), ("1d12h", 1.5 * DAY), (" 3D ", 3 * DAY)])
def test_durations_read_as_a_person_writes_them(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "7", "d", "7 days", "-1d", "1.5d", "7x", "d7"])
def test_malformed_durations_are_refused(text):
    with pytest.raises(DurationError, match="cannot read"):
        parse_duration(text)
