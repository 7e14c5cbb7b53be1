"""Approvals are records, and a decision releases exactly the hold it names, once."""

from __future__ import annotations

import pytest
from session_graphs import gated, register_all, visits

from grapharc.session import (
    AlreadyDecidedError,
    ApprovalExpiredError,
    ApprovalMismatchError,
    DeciderNotAllowedError,
    SessionManager,
    StaleApprovalError,
    ThreadNotPausedError,
    UnknownApprovalError,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def strict(directory, clock):
    """A manager whose approvals only 'ana' may decide, within 60 seconds."""
    made = SessionManager(directory, lease_seconds=5.0, clock=clock)
    register_all(made, deciders=frozenset({"ana"}), ttl=60.0)
    yield made
    made.close()


def holds_by_node(session):
    return {hold.node: hold for hold in session.holds}


def test_an_approval_is_a_record_of_what_who_until_when_and_the_answer(strict, clock):
    paused = strict.start("interview", thread_id="t1")
    (asked,) = paused.holds
    assert asked.approval_id.startswith("ap-") and asked.question == "pay 120?"
    assert asked.node == "ask" and asked.deciders == ("ana",) and len(asked.digest) == 64
    assert asked.expires_at == clock.now + 60.0 and asked.state == "open"
    clock.now += 5
    strict.approve("t1", asked.approval_id, decider="ana")
    (decided,) = strict.approvals("t1")
    assert (decided.state, decided.decided_by, decided.decided_at) == ("approved", "ana", clock.now)


def test_a_decision_naming_another_threads_request_does_not_release_the_hold(manager):
    first = manager.start("interview", thread_id="first")
    second = manager.start("interview", thread_id="second")
    with pytest.raises(ApprovalMismatchError, match="belongs to thread second, not first"):
        manager.approve("first", second.holds[0].approval_id, decider="ana")
    assert manager.get("first").holds == first.holds
    assert manager.get("second").holds == second.holds


def test_approving_one_held_node_does_not_release_the_others(manager, marks):
    paused = manager.start("gated", thread_id="t2")
    holds = holds_by_node(paused)
    assert set(holds) == {"wire", "ship"} and {h.kind for h in holds.values()} == {"gate"}
    assert holds["wire"].question == "wire 75?"

    still = manager.approve("t2", holds["wire"].approval_id, decider="ana")
    assert still.status == "paused" and [h.node for h in still.holds] == ["ship"]
    assert visits(marks, "wire") == 0 and visits(marks, "ship") == 0

    done = manager.approve("t2", holds["ship"].approval_id, decider="ana")
    assert done.status == "completed"
    assert visits(marks, "wire") == 1 and visits(marks, "ship") == 1


def test_a_reload_or_double_submit_cannot_approve_twice(manager):
    holds = holds_by_node(manager.start("gated", thread_id="t3"))
    manager.approve("t3", holds["wire"].approval_id, decider="ana")
    with pytest.raises(AlreadyDecidedError, match="already approved by ana"):
        manager.approve("t3", holds["wire"].approval_id, decider="ana")
    assert [h.node for h in manager.get("t3").holds] == ["ship"]


def test_an_unknown_approval_id_is_refused(manager):
    manager.start("interview", thread_id="t4")
    with pytest.raises(UnknownApprovalError, match="'ap-nothing'"):
        manager.approve("t4", "ap-nothing", decider="ana")


def test_changed_arguments_need_a_new_approval(manager, marks):
    holds = holds_by_node(manager.start("gated", thread_id="t5"))
    compiled = manager.graphs.compiled("gated", manager.checkpointer)
    compiled.update_state({"configurable": {"thread_id": "t5"}}, {"amount": 9_999})

    with pytest.raises(StaleApprovalError, match=r"approval .* on thread t5 is stale") as refused:
        manager.approve("t5", holds["wire"].approval_id, decider="ana")
    fresh = holds_by_node(manager.get("t5"))["wire"]
    assert fresh.approval_id != holds["wire"].approval_id and fresh.question == "wire 9999?"
    assert fresh.approval_id in refused.value.hint
    assert visits(marks, "wire") == 0
    with pytest.raises(StaleApprovalError):
        manager.approve("t5", holds["wire"].approval_id, decider="ana")


def test_an_expired_approval_is_refused_and_the_thread_ends_expired(strict, clock, marks):
    asked = strict.start("interview", thread_id="t6").holds[0]
    clock.now += 61
    with pytest.raises(ApprovalExpiredError, match="expired"):
        strict.approve("t6", asked.approval_id, decider="ana")
    assert strict.get("t6").status == "expired"
    assert strict.approvals("t6")[0].state == "expired"
    assert visits(marks, "pay") == 0
    with pytest.raises(ThreadNotPausedError):
        strict.approve("t6", asked.approval_id, decider="ana")


def test_only_the_named_deciders_may_decide(strict):
    asked = strict.start("interview", thread_id="t7").holds[0]
    with pytest.raises(DeciderNotAllowedError, match=r"'bo' may not decide .* decided by ana"):
        strict.approve("t7", asked.approval_id, decider="bo")
    assert strict.get("t7").holds[0].state == "open"


def test_a_person_deciding_for_a_named_decider_is_accepted_and_the_audit_keeps_the_person(strict):
    asked = strict.start("interview", thread_id="t7b").holds[0]
    with pytest.raises(DeciderNotAllowedError):
        strict.approve("t7b", asked.approval_id, decider="bo (finance)")
    strict.approve("t7b", asked.approval_id, decider="bo (ana)")
    decided = [e.detail for e in strict.audit("t7b") if e.kind == "decided"]
    assert [d["by"] for d in decided] == ["bo (ana)"]
    assert strict.approvals("t7b")[0].decided_by == "bo (ana)"


def test_a_rejected_gate_ends_the_thread_and_no_held_node_runs(manager, marks):
    holds = holds_by_node(manager.start("gated", thread_id="t8"))
    done = manager.reject("t8", holds["wire"].approval_id, decider="ana")
    assert done.status == "rejected" and done.holds == ()
    assert {a.node: a.state for a in manager.approvals("t8")} == {"wire": "rejected", "ship": "superseded"}
    assert visits(marks, "wire") == 0 and visits(marks, "ship") == 0


def test_a_rejected_interrupt_is_the_answer_the_node_gets(manager):
    asked = manager.start("interview", thread_id="t9").holds[0]
    done = manager.reject("t9", asked.approval_id, decider="ana")
    assert done.status == "completed" and done.outcome == "prepare,ask:rejected,pay"


def test_the_interrupt_trap_side_effects_above_the_interrupt_run_twice(manager, marks):
    asked = manager.start("interview", thread_id="t10").holds[0]
    assert visits(marks, "ask:above") == 1 and visits(marks, "ask:below") == 0
    manager.approve("t10", asked.approval_id, decider="ana")
    assert visits(marks, "ask:above") == 2  # the node re-ran from its first line
    assert visits(marks, "ask:below") == 1


def test_the_gate_is_the_session_runtimes_and_the_bare_graph_does_not_hold(marks):
    graph = gated().compile()
    graph.invoke({})
    assert visits(marks, "wire") == 1 and visits(marks, "ship") == 1
