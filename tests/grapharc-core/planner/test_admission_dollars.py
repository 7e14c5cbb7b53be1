"""Admission in dollars: the worst case's price against the budget, and the policy's spend rules."""

from __future__ import annotations

import pytest

from grapharc.harness.permissions import Decision
from grapharc.planner import (
    AdmissionChecker,
    CostEstimate,
    EdgePolicy,
    EdgeRule,
    NodeRegistry,
    NodeSpec,
    Subgraph,
)
from grapharc.policy.engine import PolicyEngine
from grapharc.runtime.budget import Budget, BudgetMeter

ALLOW_EDGES = EdgePolicy(rules=(EdgeRule(action=Decision.ALLOW, id="edges"),))


def body(spec):
    return lambda state: {}


@pytest.fixture
def priced() -> NodeRegistry:
    return NodeRegistry([
        NodeSpec(name="ask", factory=body, worst_case=CostEstimate(tokens=100, cost_usd=0.25)),
        NodeSpec(name="tidy", factory=body),
    ]).freeze()


def one(kind: str) -> Subgraph:
    return Subgraph.model_validate({"nodes": [{"name": "n", "kind": kind}],
                                    "edges": [{"source": "__start__", "target": "n"}]})


def two_asks() -> Subgraph:
    return Subgraph.model_validate({
        "nodes": [{"name": "a", "kind": "ask"}, {"name": "b", "kind": "ask"}],
        "edges": [{"source": "__start__", "target": "a"}, {"source": "a", "target": "b"}]})


def spend_engine(action: str, **ceilings: float) -> PolicyEngine:
    rule = {"id": "cap", "resource": "spend", "action": action, "reason": "", **ceilings}
    return PolicyEngine({"version": "1", "rules": [rule]})


def test_a_worst_case_that_costs_more_dollars_than_are_left_is_rejected_over_budget(priced):
    meter = BudgetMeter(Budget(max_cost_usd=0.4))
    verdict = AdmissionChecker(priced, ALLOW_EDGES).check(two_asks(), meter=meter)
    assert verdict.codes() == ["over_budget"]
    assert verdict.rejections[0].message == "worst case needs $0.5 cost_usd, but only $0.4 are left"
    assert verdict.event()["worst_case"]["cost_usd"] == 0.5


def test_a_worst_case_that_fits_the_dollars_left_is_admitted(priced):
    meter = BudgetMeter(Budget(max_cost_usd=1.0), cost_usd=0.5)
    assert AdmissionChecker(priced, ALLOW_EDGES).check(two_asks(), meter=meter).admitted


@pytest.mark.parametrize("meter", [
    BudgetMeter(Budget(max_cost_usd=0.5), cost_usd=0.7),
    BudgetMeter(Budget(max_cost_usd=0.5), unpriced_calls=1),
], ids=["overspent", "spend unknown"])
def test_a_run_with_no_dollars_left_admits_nothing_that_costs_but_still_free_work(priced, meter):
    checker = AdmissionChecker(priced, ALLOW_EDGES)
    assert checker.check(one("ask"), meter=meter).codes() == ["over_budget"]
    assert checker.check(one("tidy"), meter=meter).admitted


def test_a_deny_spend_rule_rejects_naming_the_rule(priced):
    engine = spend_engine("deny", max_cost_usd=0.3)
    verdict = AdmissionChecker(priced, ALLOW_EDGES, spend_check=engine.check_spend).check(two_asks())
    assert verdict.codes() == ["spend_denied"]
    rejection = verdict.rejections[0]
    assert (rejection.check, rejection.rule_id) == ("budget", "cap")
    assert "cost_usd 0.5 > 0.3" in rejection.message
    assert engine.audit_log[-1].decision == "deny"


def test_a_spend_rule_judges_what_the_run_already_spent_plus_the_worst_case(priced):
    engine = spend_engine("deny", max_tokens=250)
    checker = AdmissionChecker(priced, ALLOW_EDGES, spend_check=engine.check_spend)
    assert checker.check(two_asks(), meter=BudgetMeter(Budget(), tokens=40)).admitted
    assert checker.check(two_asks(), meter=BudgetMeter(Budget(), tokens=60)).codes() == [
        "spend_denied"]


def test_an_ask_spend_rule_goes_to_the_same_approver_as_node_and_edge_asks(priced):
    engine = spend_engine("ask", max_cost_usd=0.3)
    seen = []
    approving = AdmissionChecker(priced, ALLOW_EDGES, spend_check=engine.check_spend,
                                 approver=lambda record: seen.append(record) or True)
    assert approving.check(two_asks()).admitted
    assert [(r.resource, r.rule_id) for r in seen] == [("spend", "cap")]
    refused = AdmissionChecker(priced, ALLOW_EDGES, spend_check=engine.check_spend).check(two_asks())
    assert refused.codes() == ["spend_approval_required"]


def test_spend_within_every_rule_is_admitted_and_audited(priced):
    engine = spend_engine("deny", max_cost_usd=1.0)
    verdict = AdmissionChecker(priced, ALLOW_EDGES, spend_check=engine.check_spend).check(two_asks())
    assert verdict.admitted
    assert verdict.audit[-1].resource == "spend" and verdict.audit[-1].decision == "allow"
