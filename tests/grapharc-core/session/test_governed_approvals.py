"""One approval model: a governed loop in a session pauses on its admission ask as a durable
approval, which a second process decides; a decline stops the loop with the reason on the trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from session_graphs import Release, release_loop, visits
from session_procs import session_op

from grapharc.session import SessionManager


@pytest.fixture
def traced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    trace = tmp_path / "release.jsonl"
    monkeypatch.setenv("GRAPHARC_TEST_TRACE", str(trace))
    return trace


@pytest.fixture
def releasing(traced: Path, directory: Path) -> SessionManager:
    from session_graphs import register_all

    made = SessionManager(directory, lease_seconds=5.0)
    register_all(made)
    yield made
    made.close()


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def start(manager: SessionManager) -> str:
    loop = release_loop()
    paused = manager.start("release", loop.start("ship v2", Release()), thread_id="rel")
    assert paused.status == "paused"
    return manager.approvals("rel")[0].approval_id


def test_an_admission_ask_pauses_the_loop_as_a_durable_approval_before_anything_runs(
        releasing: SessionManager, marks: Path) -> None:
    start(releasing)
    approval = releasing.approvals("rel")[0]
    assert approval.node == "round" and "deploy" in approval.question
    assert "deploys-need-a-person" in approval.question
    assert visits(marks, "test") == 0 and visits(marks, "deploy") == 0  # nothing of the proposal ran


def test_approved_from_a_second_process_the_loop_carries_on_and_meets_its_goal(
        releasing: SessionManager, directory: Path, marks: Path, traced: Path) -> None:
    approval_id = start(releasing)

    code, done = session_op(directory, "resume", "rel", approval_id, "approved", "ops").result()

    assert (code, done["status"]) == (0, "completed")
    values = releasing.values("rel")
    assert (values["stop"], values["domain"]["deployed"]) == ("goal_met", "v2")
    assert visits(marks, "test") == 1 and visits(marks, "deploy") == 1
    loop_end = [e for e in events(traced) if e["phase"] == "run_end" and e["graph"] == "release"][-1]
    assert loop_end["stop_reason"] == "goal_met"


def test_declined_the_loop_stops_with_the_reason_on_the_trace(
        releasing: SessionManager, directory: Path, marks: Path, traced: Path) -> None:
    approval_id = start(releasing)

    code, done = session_op(directory, "resume", "rel", approval_id, "rejected", "ops").result()

    assert (code, done["status"]) == (0, "completed")
    assert releasing.values("rel")["stop"] == "approval_declined"
    assert visits(marks, "test") == 0 and visits(marks, "deploy") == 0
    decisions = [e for e in events(traced) if e.get("action") == "decision"]
    assert [d["failed"] for d in decisions] == [["node_approval_declined"]]
    stop = next(e for e in events(traced) if e.get("action") == "stop")
    assert stop["stop_reason"] == "approval_declined" and "node_approval_declined" in stop["detail"]
    loop_end = [e for e in events(traced) if e["phase"] == "run_end" and e["graph"] == "release"][-1]
    assert loop_end["stop_reason"] == "approval_declined"


def test_outside_a_session_the_same_ask_goes_to_the_approver_callable() -> None:
    loop = release_loop()
    loop.checker.approver = lambda request: request.subject == "deploy"
    result = loop.run("ship v2", Release())
    assert result.stop.value == "goal_met" and result.state.deployed == "v2"

    loop = release_loop()
    result = loop.run("ship v2", Release())
    assert result.stop.value == "no_new_proposal"
    first = result.rejections()[0]
    assert first.code == "node_approval_required" and "run it in a session" in first.message
