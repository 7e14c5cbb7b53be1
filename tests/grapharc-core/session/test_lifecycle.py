"""A session's life: run, pause, the process exits, resume in another process, finish."""

from __future__ import annotations

import pytest
from session_graphs import visits
from session_procs import session_op

from grapharc.runtime.errors import StateTypeError, UnknownFieldError
from grapharc.session import (
    SessionExistsError,
    SessionInputError,
    SessionManager,
    ThreadNotPausedError,
    ThreadPausedError,
    UnknownGraphError,
    UnknownSessionError,
)


def test_a_run_pauses_on_an_interrupt_and_another_process_resumes_it(directory, marks, reap):
    started = reap(session_op(directory, "start", "interview", "th-1"))
    code, paused = started.result()
    assert code == 0 and paused["status"] == "paused"
    (hold,) = paused["holds"]
    assert hold["question"] == "pay 120?" and hold["node"] == "ask" and hold["kind"] == "interrupt"
    assert started.process.returncode == 0  # the pausing process is gone

    code, done = reap(session_op(directory, "resume", "th-1", hold["approval_id"], "approved")).result()
    assert code == 0 and done["status"] == "completed"
    assert done["outcome"] == "prepare,ask:approved,pay"
    assert visits(marks, "pay") == 1


def test_the_audit_trail_records_each_completed_node_once_across_processes(directory, marks, reap):
    _, paused = reap(session_op(directory, "start", "interview", "th-2")).result()
    reap(session_op(directory, "resume", "th-2", paused["holds"][0]["approval_id"], "approved")).result()
    trail = SessionManager(directory).audit("th-2")
    nodes = sorted((e.step, e.node) for e in trail if e.kind == "node")
    assert nodes == [(1, "prepare"), (2, "ask"), (3, "pay")]
    kinds = [e.kind for e in trail if e.kind != "node"]
    assert kinds == ["created", "claimed", "run", "asked", "paused", "decided", "claimed", "run",
                     "completed"]
    runs = [e.detail for e in trail if e.kind == "run"]
    assert [(run["attempt"], run["status"]) for run in runs] == [(1, "interrupted"), (2, "completed")]


def test_a_resuming_process_that_has_not_registered_the_graph_gets_unknown_graph_error(directory, reap):
    _, paused = reap(session_op(directory, "start", "interview", "th-3")).result()
    approval = paused["holds"][0]["approval_id"]
    code, refused = reap(session_op(directory, "bare-resume", "th-3", approval)).result()
    assert code == 2 and refused["error"] == "UnknownGraphError"
    assert "thread th-3 runs graph 'interview'" in refused["message"]
    assert SessionManager(directory).get("th-3").status == "paused"  # nothing was touched


def test_resuming_a_thread_that_is_not_paused_is_refused(manager):
    paused = manager.start("interview", thread_id="th-4")
    approval = paused.holds[0].approval_id
    manager.approve("th-4", approval, decider="ana")
    with pytest.raises(ThreadNotPausedError, match="thread th-4 is not paused"):
        manager.approve("th-4", approval, decider="ana")


def test_a_new_turn_on_a_paused_thread_is_refused(manager):
    manager.start("interview", thread_id="th-5")
    with pytest.raises(ThreadPausedError, match="thread th-5 is paused"):
        manager.run("th-5", {})


def test_sessions_are_listed_with_where_each_stands(manager):
    manager.start("interview", thread_id="a-paused")
    manager.start("chain", thread_id="b-done")
    manager.create("chain", thread_id="c-new")
    stands = {s.thread_id: (s.status, s.last_node) for s in manager.list()}
    assert stands == {"a-paused": ("paused", "prepare"), "b-done": ("completed", "n4"),
                      "c-new": ("created", None)}
    assert [s.thread_id for s in manager.list("paused")] == ["a-paused"]


def test_posted_events_reach_the_inbox_at_the_next_turn_exactly_once(manager):
    manager.start("chain", thread_id="th-6")
    manager.post_event("th-6", "note", {"text": "customer called"})
    manager.run("th-6", {})
    manager.run("th-6", {})
    inbox = manager.values("th-6")["inbox"]
    assert [e["payload"] for e in inbox] == [{"text": "customer called"}]
    assert manager.events("th-6")[0].delivered_at is not None


def test_an_unregistered_graph_or_bad_input_writes_nothing(manager, directory):
    with pytest.raises(UnknownGraphError, match="'nope'"):
        manager.start("nope")
    with pytest.raises(SessionInputError):
        manager.start("chain", {"amount": object()})
    with pytest.raises(StateTypeError, match="amount"):
        manager.start("chain", {"amount": "lots"})
    with pytest.raises(UnknownFieldError):
        manager.start("chain", {"nope": 1})
    assert manager.list() == []


def test_an_unknown_thread_and_a_taken_thread_id_are_refused_by_name(manager):
    with pytest.raises(UnknownSessionError, match="'ghost'"):
        manager.get("ghost")
    manager.create("chain", thread_id="taken")
    with pytest.raises(SessionExistsError, match="'taken'"):
        manager.create("chain", thread_id="taken")
