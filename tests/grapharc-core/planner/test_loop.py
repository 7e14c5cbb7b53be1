"""The governed loop: rejection feedback, no retried proposals, traced rounds, stated stops."""

from __future__ import annotations

import json

from pydantic import BaseModel

from grapharc.planner import (
    AdmissionChecker,
    GovernedLoop,
    LoopLimits,
    Materializer,
    PlannerNode,
    StopReason,
)
from grapharc.runtime.budget import Budget
from grapharc.testing import ScriptedChatModel
from grapharc.trace.writer import TraceWriter

PLAN = '{"nodes": [{"name": "%s"}], "edges": [{"source": "__start__", "target": "%s"}]}'

class State(BaseModel):
    found: str = ""
    fixed: str = ""
    read: str = ""

WRITES = {"search": {"found"}, "edit": {"fixed"}, "deploy": set(), "read": {"read"}}


def build(registry, policy, replies, *, trace=None, budget=None, rounds=8, **model):
    model = ScriptedChatModel(responses=replies, **model)
    loop = GovernedLoop(
        planner=PlannerNode(model, catalog=registry.catalog()),
        checker=AdmissionChecker(registry=registry, edge_policy=policy),
        materializer=Materializer(registry=registry, state_schema=State, writes=WRITES,
                                  trace=trace),
        budget=budget or Budget(max_tokens=100_000), limits=LoopLimits(max_rounds=rounds),
        goal_reached=lambda s: bool(s.fixed))
    return loop, model


def test_the_seed_example_is_rejected_then_admitted(registry, deny_deploy):
    loop, _ = build(registry, deny_deploy, [PLAN % ("deploy", "deploy"), PLAN % ("edit", "edit")])
    result = loop.run("find and fix the bug", State())
    assert result.stop is StopReason.GOAL_MET
    assert [(r.round, r.admission.status.value, r.executed) for r in result.rounds] == [
        (1, "rejected", False), (2, "admitted", True)]
    assert [r.code for r in result.rejections()] == ["edge_denied"]
    assert result.state.fixed == "edit"


def test_rejection_feedback_goes_back_to_the_planner(registry, deny_deploy):
    loop, model = build(registry, deny_deploy, [PLAN % ("deploy", "deploy"),
                                                PLAN % ("edit", "edit")])
    loop.run("fix", State())
    second_prompt = model.calls[1][-1].content
    assert "edge_denied at edges[0]" in second_prompt and "was rejected" in second_prompt


def test_an_identical_proposal_is_never_checked_or_run_again(registry, deny_deploy, tmp_path):
    trace = TraceWriter(tmp_path / "t.jsonl")
    loop, model = build(registry, deny_deploy, [PLAN % ("deploy", "deploy")] * 3, trace=trace)
    result = loop.run("fix", State())
    trace.close()
    assert result.stop is StopReason.NO_NEW_PROPOSAL
    assert [r.admission.codes() for r in result.rounds] == [
        ["edge_denied"], ["proposal_repeated"], ["proposal_repeated"]]
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert sum(1 for e in events if e.get("action") == "decision") == 1
    assert "identical to the proposal of round 1" in model.calls[2][-1].content


def test_an_unreadable_reply_is_fed_back_rather_than_crashing(registry, deny_deploy):
    loop, model = build(registry, deny_deploy, ["I cannot decide (see [1]).",
                                                PLAN % ("edit", "edit")])
    result = loop.run("fix", State())
    assert result.stop is StopReason.GOAL_MET
    assert result.rounds[0].admission.codes() == ["proposal_invalid"]
    assert "expected a JSON object" in model.calls[1][-1].content


def test_the_loop_stops_at_the_round_limit_with_a_reason(registry, deny_deploy):
    replies = [PLAN % (k, k) for k in ("deploy", "search")]
    loop, _ = build(registry, deny_deploy, replies, rounds=2)
    result = loop.run("fix", State())
    assert result.stop is StopReason.MAX_ROUNDS and len(result.rounds) == 2


def test_a_planner_that_fails_stops_the_loop_with_a_reason(registry, deny_deploy):
    loop, _ = build(registry, deny_deploy, [PLAN % ("deploy", "deploy")])
    result = loop.run("fix", State())
    assert result.stop is StopReason.PLANNER_FAILED and "ScriptExhaustedError" in result.detail


def test_planner_spend_counts_against_the_budget(registry, deny_deploy):
    loop, _ = build(registry, deny_deploy, [PLAN % ("deploy", "deploy")] * 5,
                    budget=Budget(max_tokens=150))
    result = loop.run("fix", State())
    assert result.stop is StopReason.BUDGET_EXHAUSTED
    assert result.spent["tokens"] >= 150


def test_admission_events_do_not_pollute_node_metrics(registry, deny_deploy, tmp_path):
    trace = TraceWriter(tmp_path / "t.jsonl")
    loop, _ = build(registry, deny_deploy, [PLAN % ("deploy", "deploy"),
                                            PLAN % ("search", "search"),
                                            PLAN % ("edit", "edit")], trace=trace)
    result = loop.run("fix", State())
    trace.close()
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    ends = [e for e in events if e["phase"] == "end" and e["graph"] != "governed_loop"]
    assert sorted(e["node"] for e in ends) == ["edit", "search"]  # only admitted nodes executed
    governance = [e for e in events if e.get("phase") == "admission"]
    assert [e["action"] for e in governance if e["action"] in ("decision", "round")] == [
        "decision", "round", "decision", "round", "decision", "round"]
    rounds = [e for e in governance if e["action"] == "round"]
    assert all(set(e["state_delta"]) == {"round_tokens", "round_iterations", "round_duration_ms"}
               for e in rounds)
    assert "tokens" not in rounds[0] and "duration_ms" not in rounds[0]
    decision = next(e for e in governance if e["action"] == "decision")
    assert decision["status"] == "rejected" and decision["failed"] == ["edge_denied"]
    assert decision["checks_run"] == ["kinds", "edges", "budget", "depth", "acyclic"]
    assert result.rounds[1].iterations == 1
    loop_run = [e for e in events if e["run_id"] == decision["run_id"]]
    assert {e["thread_id"] for e in loop_run} == {next(e["thread_id"] for e in loop_run
                                                       if e["phase"] == "run_start")}


def test_metrics_count_the_planners_spend_once_on_the_loops_plan_node(registry, deny_deploy, tmp_path):
    from grapharc.observe.metrics import metrics

    trace = TraceWriter(tmp_path / "t.jsonl")
    loop, _ = build(registry, deny_deploy, [PLAN % ("deploy", "deploy"), PLAN % ("edit", "edit")],
                    trace=trace)
    result = loop.run("fix", State())
    trace.close()
    planner_tokens = sum(record.tokens for record in result.rounds)
    document = metrics(tmp_path / "t.jsonl").to_document()
    loop_run = next(run for run in document["runs"].values() if run["admission_events"])
    assert planner_tokens > 0
    assert loop_run["nodes"]["plan"]["tokens"] == loop_run["tokens"]["total"] == planner_tokens
    assert loop_run["tokens"]["outside_nodes"] == 0
    assert (loop_run["status"], loop_run["stop_reason"]) == ("completed", "goal_met")
