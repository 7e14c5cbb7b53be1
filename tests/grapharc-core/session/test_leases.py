"""Leases, not claims: live runners keep their threads, dead runners' threads are reclaimed,
and of two concurrent resumes exactly one wins. Every runner here is a real process."""

from __future__ import annotations

import os
import signal
import time

import pytest
from session_graphs import visits
from session_procs import session_op, wait_for, wait_until

from grapharc.session import NothingToRecoverError, SessionBusyError


def parked(tmp_path, node, lease="2", **extra):
    """Environment for a child that parks inside ``node`` and says so in READY."""
    ready = tmp_path / f"ready-{node}"
    env = {"GRAPHARC_TEST_BLOCK_AT": node, "GRAPHARC_TEST_READY": str(ready),
           "GRAPHARC_TEST_LEASE": lease}
    return ready, {**env, **extra}


def node_trail(manager, thread):
    """Completed nodes as the audit trail records them, in the order they ran."""
    return sorted(((e.node, e.step) for e in manager.audit(thread) if e.kind == "node"), key=lambda n: n[1])


def test_a_second_runner_cannot_take_a_live_session(tmp_path, directory, marks, manager, reap):
    ready, env = parked(tmp_path, "n2")
    runner = reap(session_op(directory, "start", "chain", "live", env=env))
    wait_for(ready, runner)
    first = manager.get("live")
    assert first.status == "running" and first.lease_live(time.time())

    with pytest.raises(SessionBusyError, match=r"thread live is being run by runner .*:\d+:"):
        manager.recover("live")
    with pytest.raises(SessionBusyError, match="thread live is being run"):
        manager.run("live", {})
    wait_until(lambda: manager.get("live").lease_expires_at > first.lease_expires_at)  # the heartbeat
    with pytest.raises(SessionBusyError):
        manager.recover("live")
    assert visits(marks, "n3") == 0


def test_a_killed_runners_thread_is_reclaimed_after_its_lease_and_resumes_from_its_checkpoint(
        tmp_path, directory, marks, manager, reap):
    ready, env = parked(tmp_path, "n3", lease="1")
    runner = reap(session_op(directory, "start", "chain", "dead", env=env))
    wait_for(ready, runner)
    runner.kill()
    assert manager.get("dead").status == "running"
    wait_until(lambda: not manager.get("dead").lease_live(time.time()))
    assert manager.get("dead").stand(time.time()) == "running (lease expired: reclaimable)"

    done = manager.recover("dead")
    assert done.status == "completed"
    assert [visits(marks, n) for n in ("n1", "n2", "n3", "n4")] == [1, 1, 2, 1]  # at-least-once
    assert node_trail(manager, "dead") == [("n1", 1), ("n2", 2), ("n3", 3), ("n4", 4)]
    assert [e.kind for e in manager.audit("dead")].count("reclaimed") == 1


def test_two_concurrent_resumes_of_one_thread_exactly_one_wins(tmp_path, directory, marks, manager, reap):
    approval = manager.start("interview", thread_id="race").holds[0].approval_id
    go = tmp_path / "go"
    ready, env = parked(tmp_path, "pay", GRAPHARC_TEST_GO=str(go))
    racers = [reap(session_op(directory, "resume", "race", approval, "approved", "ana", env=env))
              for _ in range(2)]
    go.touch()
    wait_until(lambda: ready.exists() and any(r.process.poll() is not None for r in racers))
    loser = next(r for r in racers if r.process.poll() is not None)
    code, refused = loser.result()
    assert code == 2 and refused["error"] == "ThreadNotPausedError"
    assert refused["message"] == (f"thread race is not paused (it is running); "
                                  f"approval {approval} was already approved by ana")

    assert visits(marks, "pay") == 1  # the winner is inside pay; the loser never got there


def test_two_concurrent_recoveries_exactly_one_wins(tmp_path, directory, marks, manager, reap):
    ready, env = parked(tmp_path, "n2", lease="1")
    first = reap(session_op(directory, "start", "chain", "orphan", env=env))
    wait_for(ready, first)
    first.kill()
    wait_until(lambda: not manager.get("orphan").lease_live(time.time()))
    ready.unlink()

    go = tmp_path / "go"
    _, env = parked(tmp_path, "n2", lease="2", GRAPHARC_TEST_GO=str(go))
    racers = [reap(session_op(directory, "recover", "orphan", env=env)) for _ in range(2)]
    go.touch()
    wait_until(lambda: ready.exists() and any(r.process.poll() is not None for r in racers))
    loser = next(r for r in racers if r.process.poll() is not None)
    code, refused = loser.result()
    assert code == 2 and refused["error"] == "SessionBusyError"
    assert "thread orphan is being run by runner" in refused["message"]
    assert [e.kind for e in manager.audit("orphan")].count("reclaimed") == 1


def test_a_stalled_runner_that_lost_its_lease_cannot_write_the_thread(
        tmp_path, directory, marks, manager, reap):
    release = tmp_path / "release"
    ready, env = parked(tmp_path, "n2", lease="1", GRAPHARC_TEST_RELEASE=str(release))
    stalled = reap(session_op(directory, "start", "chain", "stall", env=env))
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


def test_only_a_dead_or_failed_runs_thread_can_be_recovered(manager):
    manager.start("chain", thread_id="fine")
    with pytest.raises(NothingToRecoverError, match="thread fine is completed"):
        manager.recover("fine")
