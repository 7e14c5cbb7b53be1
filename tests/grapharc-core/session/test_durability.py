"""A crash at any point leaves a resumable thread whose audit trail has each completed node once.

Runners are real processes killed with SIGKILL at deterministic points: parked inside a
node (between the checkpoints around it) or parked inside SQLite while a checkpoint row
is being written. Execution is at-least-once per node; the audit trail is exactly-once.
"""

from __future__ import annotations

import time

import pytest
from session_graphs import visits
from session_procs import session_op, wait_for, wait_until

CHAIN = ["n1", "n2", "n3", "n4"]


def recovered(manager, thread):
    wait_until(lambda: not manager.get(thread).lease_live(time.time()))
    return manager.recover(thread)


def assert_each_node_once(manager, thread, nodes):
    trail = sorted((e.step, e.node) for e in manager.audit(thread) if e.kind == "node")
    assert trail == list(enumerate(nodes, start=1))


@pytest.mark.parametrize("node", CHAIN)
def test_a_kill_inside_any_node_leaves_a_thread_that_recovers_with_each_node_audited_once(
        tmp_path, directory, marks, manager, reap, node):
    ready = tmp_path / "ready"
    env = {"GRAPHARC_TEST_BLOCK_AT": node, "GRAPHARC_TEST_READY": str(ready), "GRAPHARC_TEST_LEASE": "1"}
    runner = reap(session_op(directory, "start", "chain", "k", env=env))
    wait_for(ready, runner)
    runner.kill()

    assert recovered(manager, "k").status == "completed"
    assert manager.values("k")["log"] == CHAIN
    assert_each_node_once(manager, "k", CHAIN)
    assert all(visits(marks, n) >= 1 for n in CHAIN) and visits(marks, node) == 2


@pytest.mark.parametrize("step", [-1, 0, 2, 4])
def test_a_kill_during_a_checkpoint_write_leaves_a_thread_that_recovers(
        tmp_path, directory, marks, manager, reap, step):
    ready = tmp_path / "ready"
    env = {"GRAPHARC_TEST_KILL_IN_PUT": str(step), "GRAPHARC_TEST_READY": str(ready),
           "GRAPHARC_TEST_LEASE": "1"}
    runner = reap(session_op(directory, "start", "chain", "w", env=env))
    wait_for(ready, runner)
    runner.kill()

    assert recovered(manager, "w").status == "completed"
    assert manager.values("w")["log"] == CHAIN
    assert_each_node_once(manager, "w", CHAIN)


@pytest.mark.parametrize(("held", "step"), [("n1", 2), ("n2", 4)])
def test_a_kill_before_a_nodes_writes_are_saved_still_audits_that_node_once(
        tmp_path, directory, marks, manager, reap, held, step):
    # LangGraph saves a node's writes in a background thread and waits only for the next
    # checkpoint: here they are held until the runner is parked inside the checkpoint write of a
    # later step, so they are never saved, while the next checkpoint carries their effect
    ready = tmp_path / "ready"
    env = {"GRAPHARC_TEST_KILL_IN_PUT": str(step), "GRAPHARC_TEST_HOLD_WRITES": held,
           "GRAPHARC_TEST_READY": str(ready), "GRAPHARC_TEST_LEASE": "1"}
    runner = reap(session_op(directory, "start", "chain", "h", env=env))
    wait_for(ready, runner)
    runner.kill()

    assert recovered(manager, "h").status == "completed"
    assert manager.values("h")["log"] == CHAIN
    assert_each_node_once(manager, "h", CHAIN)
    writes = {e.node: e.detail["writes"] for e in manager.audit("h") if e.kind == "node"}
    assert writes == {n: None if n == held else ["log"] for n in CHAIN}
    assert visits(marks, held) == 1


def test_a_kill_after_a_decision_resumes_with_that_decision_and_asks_nobody_again(
        tmp_path, directory, marks, manager, reap):
    approval = manager.start("interview", thread_id="d").holds[0].approval_id
    ready = tmp_path / "ready"
    env = {"GRAPHARC_TEST_BLOCK_AT": "ask:below", "GRAPHARC_TEST_READY": str(ready),
           "GRAPHARC_TEST_LEASE": "1"}
    runner = reap(session_op(directory, "resume", "d", approval, "approved", "ana", env=env))
    wait_for(ready, runner)
    runner.kill()

    done = recovered(manager, "d")
    assert done.status == "completed" and done.outcome == "prepare,ask:approved,pay"
    assert [a.approval_id for a in manager.approvals("d")] == [approval]
    assert visits(marks, "pay") == 1
    assert_each_node_once(manager, "d", ["prepare", "ask", "pay"])


def test_a_kill_inside_a_paused_turns_last_write_recovers_to_the_same_pause(
        tmp_path, directory, marks, manager, reap):
    ready = tmp_path / "ready"
    env = {"GRAPHARC_TEST_BLOCK_AT": "ask:above", "GRAPHARC_TEST_READY": str(ready),
           "GRAPHARC_TEST_LEASE": "1"}
    runner = reap(session_op(directory, "start", "interview", "p", env=env))
    wait_for(ready, runner)
    runner.kill()

    paused = recovered(manager, "p")
    assert paused.status == "paused" and [h.question for h in paused.holds] == ["pay 120?"]
    done = manager.approve("p", paused.holds[0].approval_id, decider="ana")
    assert done.outcome == "prepare,ask:approved,pay"
