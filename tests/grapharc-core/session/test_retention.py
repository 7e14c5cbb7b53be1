"""Retention removes finished sessions with their checkpoints and holds, never live ones."""

from __future__ import annotations

import pytest
from session_graphs import register_all

from grapharc.session import DurationError, SessionManager, parse_duration
from grapharc.session.retention import footprint

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
    files = (manager.store.path, manager.checkpoints_path)
    before = footprint(*files)

    report = manager.prune(7 * DAY)

    assert set(report.removed) == {f"old-{i}" for i in range(60)} | {"old-rejected"}
    assert report.bytes_after < report.bytes_before == before
    assert footprint(*files) == report.bytes_after
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


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90), ("15m", 900), ("12h", 43200), ("7d", 7 * DAY),
                                               ("2w", 14 * DAY), ("1d12h", 1.5 * DAY), (" 3D ", 3 * DAY)])
def test_durations_read_as_a_person_writes_them(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "7", "d", "7 days", "-1d", "1.5d", "7x", "d7"])
def test_malformed_durations_are_refused(text):
    with pytest.raises(DurationError, match="cannot read"):
        parse_duration(text)
