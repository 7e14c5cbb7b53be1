"""metrics: counts, durations, retries, termination, and attribution that fan-out cannot inflate."""

from __future__ import annotations

import pytest

from grapharc.observe.errors import UnknownRunError
from grapharc.observe.metrics import metrics


def doc(path, run="r", **kwargs):
    return metrics(path, run, **kwargs).to_document()


def test_per_node_counts_durations_tokens_and_termination_reason(builder):
    builder.run_start("r")
    builder.node("r", "plan", 1, tokens=10, duration_ms=4.0)
    builder.node("r", "act", 2, tokens=5, duration_ms=6.0)
    builder.node("r", "act", 3, tokens=7, duration_ms=10.0)
    builder.run_end("r", status="budget_exceeded", stop_reason="tokens", tokens=22)
    result = doc(builder.write())
    assert result["status"] == "budget_exceeded" and result["stop_reason"] == "tokens"
    assert result["node_executions"] == 3 and result["completed"] == 3
    assert result["nodes"]["act"] == {"executions": 2, "completed": 2, "failed": 0, "interrupted": 0,
                                      "duration_ms": 16.0, "mean_ms": 8.0, "max_ms": 10.0, "tokens": 12,
                                      "recorded_cost_usd": None}
    assert result["tokens"] == {"total": 22, "nodes": 22, "outside_nodes": 0}
    assert result["meter"]["tokens"] == 22


def test_fan_out_workers_are_each_credited_only_their_own_tokens(builder):
    builder.run_start("r").node("r", "split", 1)
    for _ in range(3):
        builder.start("r", "worker", 2)
    for _ in range(3):
        builder.end("r", "worker", 2, tokens=8)
    builder.node("r", "join", 3).run_end("r", tokens=24)
    result = doc(builder.write())
    assert result["nodes"]["worker"]["executions"] == 3
    assert result["nodes"]["worker"]["tokens"] == 24
    assert result["tokens"]["total"] == 24


def test_admission_and_planning_round_events_never_count_as_node_executions(builder):
    builder.run_start("r")
    builder.add("admission", "r", action="round", node="planner", step=1,
                state_delta={"round_tokens": 900, "round_iterations": 3, "round_duration_ms": 500.0})
    builder.add("admission", "r", action="decision", node="admission", step=1, status="admitted",
                state_delta={"round_tokens": 900})
    builder.add("admission", "r", action="plan", node="admission", step=1)
    builder.node("r", "work", 1, tokens=5)
    builder.run_end("r")
    result = doc(builder.write())
    assert result["node_executions"] == 1 and list(result["nodes"]) == ["work"]
    assert result["admission_events"] == 3
    assert result["tokens"]["total"] == 5


def test_model_calls_outside_any_node_count_once_for_the_run(builder):
    builder.run_start("r")
    builder.add("model_call", "r", node=None, tokens=40, cost_usd=0.002, model="mock/a")
    builder.add("model_call", "r", node=None, tokens=60, cost_usd=0.003, model="mock/a")
    builder.node("r", "tool", 1, tokens=0)
    builder.run_end("r", tokens=100)
    result = doc(builder.write())
    assert result["tokens"] == {"total": 100, "nodes": 0, "outside_nodes": 100}
    assert result["outside_nodes"]["events"] == {"model_call": 2}
    assert result["recorded_cost_usd"] == pytest.approx(0.005)
    assert result["node_executions"] == 1


def test_a_sub_step_inside_a_node_span_is_not_charged_twice(builder):
    builder.run_start("r").start("r", "agent", 1)
    builder.add("model_call", "r", node="agent", step=1, tokens=30)
    builder.end("r", "agent", 1, tokens=30).run_end("r")
    result = doc(builder.write())
    assert result["tokens"]["total"] == 30 and result["substeps"] == 1


def test_run_end_meter_figures_are_shown_but_never_summed(builder):
    builder.run_start("r").node("r", "a", 1, tokens=3).run_end("r", tokens=3, cost_usd=0.5)
    result = doc(builder.write())
    assert result["tokens"]["total"] == 3 and result["recorded_cost_usd"] is None
    assert result["meter"] == {"tokens": 3, "cost_usd": 0.5}


def test_failures_retries_and_unfinished_executions(builder):
    builder.run_start("r")
    builder.start("r", "fetch", 1).error("r", "fetch", 1, message="502")
    builder.start("r", "fetch", 1).end("r", "fetch", 1)  # a retry of the same step
    builder.start("r", "write", 2)  # the process died here
    path = builder.write()
    result = doc(path)
    assert result["status"] == "incomplete"
    assert result["failed"] == 1 and result["node_retries"] == 1 and result["unfinished"] == 1
    assert result["failures"] == [{"node": "fetch", "type": "ValueError", "count": 1,
                                   "first_message": "502", "first_attempt": 1, "first_step": 1}]


def test_attempts_beyond_the_first_count_as_retries(builder):
    builder.run_start("r").start("r", "a", 1).error("r", "a", 1)
    builder.node("r", "a", 2, attempt=2).run_end("r", attempt=2)
    result = doc(builder.write())
    assert result["attempts"] == [1, 2] and result["resumes"] == 1 and result["retries"] == 1


def test_interrupts_close_an_execution_without_failing_it(builder):
    builder.run_start("r").start("r", "ask", 1)
    builder.add("interrupt", "r", graph="g", node="ask", step=1, duration_ms=1.0)
    builder.run_end("r", status="interrupted", stop_reason="interrupted")
    result = doc(builder.write())
    assert result["interrupted"] == 1 and result["unfinished"] == 0 and result["failed"] == 0


def test_unknown_event_kinds_do_not_change_node_counts(builder):
    builder.run_start("r").node("r", "a", 1)
    builder.add("checkpoint_saved", "r", node=None)
    builder.add("heartbeat", "r", node="a", step=1)
    result = doc(builder.write())
    assert result["node_executions"] == 1 and result["tokens"]["total"] == 0


def test_an_unknown_run_is_reported_by_id(builder):
    path = builder.run_start("r").write()
    with pytest.raises(UnknownRunError, match="no events for run 'zzz'"):
        metrics(path, "zzz")


def test_without_a_run_every_run_is_reported_with_a_total(builder):
    builder.run_start("a").node("a", "x", 1, tokens=2).run_end("a")
    builder.run_start("b").node("b", "x", 1, tokens=3).run_end("b", status="error", reason="ValueError")
    report = metrics(builder.write()).to_document()
    assert report["total"]["runs"] == 2 and report["total"]["tokens"]["total"] == 5
    assert report["runs"]["b"]["status"] == "error"


def test_an_end_whose_start_is_missing_still_counts_one_execution(builder):
    builder.run_start("r").end("r", "a", 1, tokens=2)
    result = doc(builder.write())
    assert result["node_executions"] == 1 and result["unfinished"] == 0 and result["tokens"]["total"] == 2


def test_governance_events_that_name_no_run_are_reported_apart_from_the_runs(builder):
    builder.run_start("r").node("r", "a", 1, tokens=2).run_end("r")
    builder.events.append({"phase": "admission", "action": "plan", "loop_id": "L",
                           "round": 1, "planner_tokens": 30, "ts": 1.0})
    builder.events.append({"phase": "admission", "action": "round", "loop_id": "L",
                           "state_delta": {"round_tokens": 30}, "ts": 2.0})
    document = metrics(builder.write()).to_document()
    assert list(document["runs"]) == ["r"]
    assert document["outside_runs"]["admission_events"] == 2
    assert document["outside_runs"]["node_executions"] == 0
    assert document["total"]["tokens"]["total"] == 2 and document["total"]["runs"] == 1
