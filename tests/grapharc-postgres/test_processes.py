"""Real processes sharing one PostgreSQL database: of two concurrent resumes exactly one wins, a
killed runner's thread is reclaimed and finished from its checkpoint, a stalled runner that lost
its lease writes nothing, and the credit approval demo paused by one process is approved and
finished by another."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from session_graphs import visits
from session_procs import Child, session_op, wait_for, wait_until

from grapharc.session import SessionManager

HERE = Path(__file__).parent


def parked(tmp_path: Path, node: str, lease: str = "2", **extra: str) -> tuple[Path, dict[str, str]]:
    """Environment for a child that parks inside ``node`` and says so in READY."""
    ready = tmp_path / f"ready-{node}"
    return ready, {"GRAPHARC_TEST_BLOCK_AT": node, "GRAPHARC_TEST_READY": str(ready),
                   "GRAPHARC_TEST_LEASE": lease, **extra}


def node_trail(manager: SessionManager, thread: str) -> list[tuple[str | None, int | None]]:
    """Completed nodes as the audit trail records them, in step order."""
    return sorted(((e.node, e.step) for e in manager.audit(thread) if e.kind == "node"),
                  key=lambda n: n[1] or 0)


def test_two_concurrent_resumes_from_two_processes_exactly_one_wins(
        tmp_path, postgres_uri, manager, marks, reap):
    approval = manager.start("interview", thread_id="race").holds[0].approval_id
    go = tmp_path / "go"
    ready, env = parked(tmp_path, "pay", GRAPHARC_TEST_GO=str(go))
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


def test_a_killed_runners_thread_is_reclaimed_after_its_lease_and_finished_from_its_checkpoint(
        tmp_path, postgres_uri, manager, marks, reap):
    ready, env = parked(tmp_path, "n3", lease="1")
    runner = reap(session_op(postgres_uri, "start", "chain", "dead", env=env))
    wait_for(ready, runner)
    runner.kill()
    wait_until(lambda: not manager.get("dead").lease_live(time.time()))

    assert manager.recover("dead").status == "completed"
    assert [visits(marks, n) for n in ("n1", "n2", "n3", "n4")] == [1, 1, 2, 1]  # at-least-once
    assert node_trail(manager, "dead") == [("n1", 1), ("n2", 2), ("n3", 3), ("n4", 4)]
    assert [e.kind for e in manager.audit("dead")].count("reclaimed") == 1


def test_a_stalled_runner_that_lost_its_lease_writes_nothing(tmp_path, postgres_uri, manager, marks, reap):
    release = tmp_path / "release"
    ready, env = parked(tmp_path, "n2", lease="1", GRAPHARC_TEST_RELEASE=str(release))
    stalled = reap(session_op(postgres_uri, "start", "chain", "stall", env=env))
    wait_for(ready, stalled)
    os.kill(stalled.process.pid, signal.SIGSTOP)
    wait_until(lambda: not manager.get("stall").lease_live(time.time()))
    assert manager.recover("stall").status == "completed"

    release.touch()
    os.kill(stalled.process.pid, signal.SIGCONT)
    code, refused = stalled.result()
    assert code == 2 and refused["error"] == "LeaseLostError"
    assert manager.values("stall")["log"] == ["n1", "n2", "n3", "n4"]
    assert manager.get("stall").status == "completed"
    assert node_trail(manager, "stall") == [("n1", 1), ("n2", 2), ("n3", 3), ("n4", 4)]
    assert visits(marks, "n3") == 1


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
