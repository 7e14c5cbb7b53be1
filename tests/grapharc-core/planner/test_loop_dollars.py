"""The governed loop's budget: the planner's dollars count, and an exhausted round never runs."""

from __future__ import annotations

from langchain_core.messages import AIMessage
from pydantic import BaseModel

from grapharc.harness.permissions import Decision
from grapharc.planner import (
    AdmissionChecker,
    EdgePolicy,
    EdgeRule,
    GovernedLoop,
    LoopLimits,
    Materializer,
    NodeRegistry,
    NodeSpec,
    PlannerNode,
    StopReason,
)
from grapharc.runtime.budget import Budget
from grapharc.testing import ScriptedChatModel

PLAN = '{"nodes": [{"name": "%s"}], "edges": [{"source": "__start__", "target": "%s"}]}'
ALLOW = EdgePolicy(rules=(EdgeRule(action=Decision.ALLOW, id="all"),))


class State(BaseModel):
    found: str = ""
    fixed: str = ""
    read: str = ""


def loop_with(registry, model, budget: Budget) -> GovernedLoop:
    return GovernedLoop(
        planner=PlannerNode(model, catalog=registry.catalog()),
        checker=AdmissionChecker(registry=registry, edge_policy=ALLOW),
        materializer=Materializer(registry=registry, state_schema=State,
                                  writes={"search": {"found"}, "edit": {"fixed"},
                                          "deploy": {"fixed"}}),
        budget=budget, limits=LoopLimits(max_rounds=5), goal_reached=lambda state: False)


def test_the_planners_priced_calls_count_against_the_dollar_budget(registry):
    model = ScriptedChatModel(responses=[PLAN % (k, k) for k in ("deploy", "search", "edit")],
                              cost_usd=0.3)
    result = loop_with(registry, model, Budget(max_cost_usd=0.5)).run("fix", State())
    assert result.stop is StopReason.BUDGET_EXHAUSTED
    assert len(model.calls) == 2 and result.spent["cost_usd"] == 0.6


def test_an_unpriced_planner_under_a_dollar_ceiling_stops_before_anything_runs(registry, factories):
    model = ScriptedChatModel(responses=[PLAN % ("deploy", "deploy")] * 3, cost_usd=None)
    result = loop_with(registry, model, Budget(max_cost_usd=5.0)).run("fix", State())
    assert result.stop is StopReason.BUDGET_EXHAUSTED and "reported no price" in result.detail
    assert result.spent["unpriced_calls"] == 1 and factories.calls == []
    assert [(r.admission.status.value, r.executed) for r in result.rounds] == [("admitted", False)]


def test_a_planner_that_spends_the_last_tokens_ends_the_loop_instead_of_running_a_free_round(
        registry, factories):
    reply = AIMessage(content=PLAN % ("deploy", "deploy"),
                      usage_metadata={"input_tokens": 50, "output_tokens": 50, "total_tokens": 100})
    model = ScriptedChatModel(responses=[reply])
    result = loop_with(registry, model, Budget(max_tokens=100)).run("fix", State())
    assert result.stop is StopReason.BUDGET_EXHAUSTED
    assert factories.calls == [] and not result.rounds[0].executed


def test_spent_counts_the_unpriced_calls_the_nodes_of_a_round_made():
    unpriced = ScriptedChatModel(cost_usd=None)

    def ask(spec):
        return lambda state: {"found": str(unpriced.invoke("q").content)}

    registry = NodeRegistry([NodeSpec(name="search", factory=ask)]).freeze()
    planner = ScriptedChatModel(responses=[PLAN % ("search", "search")], cost_usd=0.0)
    result = loop_with(registry, planner, Budget(max_tokens=100_000)).run("fix", State())
    assert result.spent["unpriced_calls"] == 1 and result.spent["iterations"] == 1
