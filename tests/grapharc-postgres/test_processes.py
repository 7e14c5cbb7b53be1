"""Real processes sharing one PostgreSQL database: of two concurrent resumes exactly one wins, and
the credit approval demo paused by one process is approved and finished by another."""

from __future__ import annotations

import sys
from pathlib import Path

from session_graphs import register_all, visits
from session_procs import Child, session_op, wait_until

from grapharc.session import SessionManager

HERE = Path(__file__).parent


def test_two_concurrent_resumes_from_two_processes_exactly_one_wins(
        tmp_path, postgres_uri, reap, monkeypatch):
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("GRAPHARC_TEST_MARKS", str(marks))
    manager = SessionManager(postgres_uri, lease_seconds=5.0)
    register_all(manager)
    approval = manager.start("interview", thread_id="race").holds[0].approval_id
    go, ready = tmp_path / "go", tmp_path / "ready-pay"
    env = {"GRAPHARC_TEST_BLOCK_AT": "pay", "GRAPHARC_TEST_READY": str(ready), "GRAPHARC_TEST_LEASE": "2",
           "GRAPHARC_TEST_GO": str(go)}
    racers = [reap(session_op(postgres_uri, "resume", "race", approval, "approved", "ana", env=env))
              for _ in range(2)]
    go.touch()
    wait_until(lambda: ready.exists() and any(r.process.poll() is not None for r in racers))
    loser = next(r for r in racers if r.process.poll() is not None)
    code, refused = loser.result()
    assert code == 2 and refused["error"] == "ThreadNotPausedError"
    assert refused["message"] == (f"thread race is not paused (it is running); "
                                  f"approval {approval} was already approved by ana")
    assert visits(marks, "pay") == 1  # the winner is inside pay; the loser never got there
    session = manager.get("race")
    assert session.status == "running" and session.runner != manager.runner
    decided = [e for e in manager.audit("race") if e.kind == "decided"]
    assert len(decided) == 1 and decided[0].detail["by"] == "ana"
    manager.close()


def credit(uri: str, *args: str) -> Child:
    return Child([sys.executable, str(HERE / "credit_child.py"), uri, *args])


def test_the_credit_demo_pauses_in_one_process_and_is_approved_from_another(postgres_uri):
    code, paused = credit(postgres_uri, "run", "LN-7310", "loan-1").result()
    assert code == 0 and paused["status"] == "paused"
    assert [h["node"] for h in paused["holds"]] == ["sign_off"]

    code, done = credit(postgres_uri, "approve", "loan-1").result()
    assert code == 0 and done["status"] == "completed" and done["outcome"] == "released"

    manager = SessionManager(postgres_uri)
    try:
        trail = [e.kind for e in manager.audit("loan-1")]
        assert trail.count("claimed") == 2 and trail.count("decided") == 1 and trail[-1] == "completed"
        nodes = [e.node for e in manager.audit("loan-1") if e.kind == "node"]
        assert nodes.count("disburse") == 1 and nodes.count("sign_off") == 1
        checkpoint = manager.checkpoints.saver().get_tuple({"configurable": {"thread_id": "loan-1"}})
        assert checkpoint is not None and checkpoint.checkpoint["channel_values"].get("released")
    finally:
        manager.close()

