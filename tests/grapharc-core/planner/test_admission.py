"""The admission gate: five checks on every proposal, keyed on kinds, with nothing run."""

from __future__ import annotations

import pytest

from grapharc.harness.permissions import Decision
from grapharc.planner import (
    CHECKS,
    AdmissionChecker,
    AdmissionSetupError,
    EdgePolicy,
    EdgeRule,
    NodePolicy,
    NodeRegistry,
    NodeRule,
    NodeSpec,
    Subgraph,
)
from grapharc.runtime.budget import Budget, BudgetMeter


def chain(*nodes: dict, edges: list[tuple[str, str]] | None = None) -> Subgraph:
    names = [n["name"] for n in nodes]
    pairs = edges if edges is not None else list(zip(["__start__", *names], names, strict=False))
    return Subgraph.model_validate({"nodes": list(nodes),
                                    "edges": [{"source": a, "target": b} for a, b in pairs]})


def test_renaming_a_denied_kind_does_not_evade_the_policy(registry, deny_deploy):
    verdict = AdmissionChecker(registry, deny_deploy).check(
        chain({"name": "harmless_helper", "kind": "deploy"}))
    assert not verdict.admitted
    assert verdict.codes() == ["edge_denied"]
    assert verdict.rejections[0].rule_id == "no-deploy"


def test_a_rename_hidden_in_a_nested_scope_is_still_denied(registry, deny_deploy):
    inner = {"nodes": [{"name": "helper", "kind": "deploy"}],
             "edges": [{"source": "__start__", "target": "helper"}]}
    verdict = AdmissionChecker(registry, deny_deploy).check(
        chain({"name": "search"}, {"name": "tidy_up", "subgraph": inner}))
    assert verdict.codes() == ["edge_denied"]
    assert verdict.rejections[0].location == "nodes[1].subgraph.edges[0]"


def test_naming_an_instance_after_a_permitted_kind_does_not_borrow_its_permission(
        registry, deny_deploy):
    verdict = AdmissionChecker(registry, deny_deploy).check(chain({"name": "search",
                                                                  "kind": "deploy"}))
    assert verdict.codes() == ["edge_denied"]


def test_a_live_node_without_a_kind_cannot_be_wired_at_all(registry, deny_deploy):
    proposal = chain({"name": "search"}, edges=[("__start__", "search"), ("search", "handmade")])
    checker = AdmissionChecker(registry, deny_deploy)
    verdict = checker.check(proposal, live={"handmade": None})
    assert verdict.codes() == ["edge_unwireable"]
    assert checker.check(proposal, live={"handmade": "edit"}).admitted


def test_an_edge_to_a_node_that_is_nowhere_is_refused(registry, deny_deploy):
    proposal = chain({"name": "search"}, edges=[("__start__", "search"), ("search", "ghost")])
    assert AdmissionChecker(registry, deny_deploy).check(proposal).codes() == ["edge_unknown_node"]


def test_an_already_overspent_run_admits_nothing_that_costs(registry, deny_deploy):
    meter = BudgetMeter(Budget(max_tokens=1000), tokens=1000)
    checker = AdmissionChecker(registry, deny_deploy)
    verdict = checker.check(chain({"name": "search"}), meter=meter)
    assert verdict.codes() == ["over_budget"]
    assert meter.tokens == 1000 and meter.iterations == 0  # read, never written


def test_a_worst_case_over_what_is_left_is_refused_before_anything_exists(
        registry, deny_deploy, factories):
    meter = BudgetMeter(Budget(max_tokens=2400))
    verdict = AdmissionChecker(registry, deny_deploy).check(
        chain({"name": "search"}, {"name": "edit"}), meter=meter)
    assert verdict.codes() == ["over_budget"] and "2500 tokens" in verdict.rejections[0].message
    assert factories.calls == []


def test_every_failed_check_is_reported_not_just_the_first(registry, deny_deploy):
    nested = {"nodes": [{"name": "inner", "subgraph": {
        "nodes": [{"name": "x", "kind": "search"}], "edges": [{"source": "__start__",
                                                                "target": "x"}]}}],
        "edges": [{"source": "__start__", "target": "inner"}]}
    proposal = chain({"name": "mystery", "kind": "nope"}, {"name": "deploy"},
                     {"name": "edit"}, {"name": "deeper", "subgraph": nested},
                     edges=[("__start__", "mystery"), ("mystery", "deploy"), ("deploy", "edit"),
                            ("edit", "deploy"), ("edit", "deeper")])
    checker = AdmissionChecker(registry, deny_deploy, max_depth=2)
    verdict = checker.check(proposal, meter=BudgetMeter(Budget(max_tokens=100)))
    assert {r.check for r in verdict.rejections} == set(CHECKS)
    assert {"kind_unknown", "edge_denied", "over_budget", "too_deep", "cycle"} <= set(
        verdict.codes())
    assert verdict.checks_run == CHECKS


def test_nothing_runs_during_a_check(registry, deny_deploy, factories):
    verdict = AdmissionChecker(registry, deny_deploy).check(
        chain({"name": "search"}, {"name": "read", "args": {"path": "src/app"}}))
    assert verdict.admitted and factories.calls == []


def test_args_are_validated_by_the_kinds_schema_and_the_validated_value_is_kept(
        registry, deny_deploy):
    verdict = AdmissionChecker(registry, deny_deploy).check(
        chain({"name": "r", "kind": "read", "args": {"path": "src/app"}}))
    assert verdict.admitted
    assert verdict.args["r"].path == "src/app" and verdict.args["r"].limit == 10


def test_args_that_fail_the_schema_are_refused_with_their_location(registry, deny_deploy):
    verdict = AdmissionChecker(registry, deny_deploy).check(
        chain({"name": "r", "kind": "read", "args": {"path": "../../etc/passwd", "mode": "w"}}))
    assert verdict.codes() == ["args_invalid"]
    assert {r.location for r in verdict.rejections} == {"nodes[0].args.path",
                                                        "nodes[0].args.mode"}


def test_a_kind_without_a_schema_takes_no_args(registry, deny_deploy):
    verdict = AdmissionChecker(registry, deny_deploy).check(
        chain({"name": "search", "args": {"path": "/etc/passwd"}}))
    assert verdict.codes() == ["args_unexpected"]


def test_a_cycle_is_refused_naming_its_nodes(registry, deny_deploy):
    proposal = chain({"name": "search"}, {"name": "edit"},
                     edges=[("__start__", "search"), ("search", "edit"), ("edit", "search")])
    verdict = AdmissionChecker(registry, deny_deploy).check(proposal)
    assert verdict.codes() == ["cycle"] and "search, edit" in verdict.rejections[0].message


def test_nodes_no_path_reaches_and_scopes_without_an_entry_are_refused(registry, deny_deploy):
    checker = AdmissionChecker(registry, deny_deploy)
    stranded = chain({"name": "search"}, {"name": "edit"}, edges=[("__start__", "search")])
    assert checker.check(stranded).codes() == ["unreachable_node"]
    assert checker.check(chain({"name": "search"}, edges=[])).codes() == ["no_entry"]


def test_nesting_depth_counts_the_scopes_in_the_proposal(registry, deny_deploy):
    inner = {"nodes": [{"name": "s", "kind": "search"}],
             "edges": [{"source": "__start__", "target": "s"}]}
    proposal = chain({"name": "outer", "subgraph": inner})
    assert AdmissionChecker(registry, deny_deploy, max_depth=2).check(proposal).admitted
    verdict = AdmissionChecker(registry, deny_deploy, max_depth=1).check(proposal)
    assert verdict.codes() == ["too_deep"]


def test_implied_edges_to_end_are_judged_by_the_policy_too(registry):
    policy = EdgePolicy(rules=(EdgeRule(action=Decision.DENY, source="deploy", target="__end__"),
                               EdgeRule(action=Decision.ALLOW)))
    verdict = AdmissionChecker(registry, policy).check(chain({"name": "deploy"}))
    assert verdict.codes() == ["edge_denied"]
    assert verdict.rejections[0].location == "deploy -> __end__ (implied)"


def test_unmatched_edges_are_denied(registry):
    policy = EdgePolicy(rules=(EdgeRule(action=Decision.ALLOW, source="__start__"),))
    verdict = AdmissionChecker(registry, policy).check(chain({"name": "search"}))
    assert verdict.codes() == ["edge_denied"]
    assert "unmatched is deny" in verdict.rejections[0].message


def test_a_node_policy_deny_refuses_the_kind_wherever_it_appears(registry, deny_deploy):
    nodes = NodePolicy(rules=(NodeRule(action=Decision.DENY, kind="edit", id="no-edit"),
                              NodeRule(action=Decision.ALLOW)))
    verdict = AdmissionChecker(registry, deny_deploy, node_policy=nodes).check(
        chain({"name": "fix_it", "kind": "edit"}))
    assert verdict.codes() == ["node_denied"] and verdict.rejections[0].rule_id == "no-edit"


def test_an_ask_is_refused_unless_the_approver_says_yes(registry):
    policy = EdgePolicy(rules=(EdgeRule(action=Decision.ASK, target="deploy"),
                               EdgeRule(action=Decision.ALLOW)))
    proposal = chain({"name": "deploy"})
    assert AdmissionChecker(registry, policy).check(proposal).codes() == [
        "edge_approval_required"]
    seen = []
    approved = AdmissionChecker(registry, policy,
                                approver=lambda record: seen.append(record) or True)
    assert approved.check(proposal).admitted and seen[0].subject == "__start__ -> deploy"


def test_every_policy_decision_lands_in_an_audit_record(registry):
    policy = EdgePolicy(version="v7", digest="abc", rules=(
        EdgeRule(action=Decision.ALLOW, id="all", reason="fine"),))
    verdict = AdmissionChecker(registry, policy).check(chain({"name": "search"}))
    assert [(a.subject, a.rule_id, a.policy_version, a.document_digest) for a in verdict.audit] \
        == [("__start__ -> search", "all", "v7", "abc"), ("search -> __end__", "all", "v7", "abc")]


def test_the_verdict_is_bound_to_the_proposal_by_fingerprint(registry, deny_deploy):
    proposal = chain({"name": "search"})
    verdict = AdmissionChecker(registry, deny_deploy).check(proposal)
    assert verdict.fingerprint == proposal.fingerprint()
    assert verdict.fingerprint != chain({"name": "edit"}).fingerprint()


def test_an_unfrozen_registry_cannot_back_a_checker(deny_deploy, factories):
    with pytest.raises(AdmissionSetupError, match="frozen"):
        AdmissionChecker(NodeRegistry([NodeSpec(name="a", factory=factories)]), deny_deploy)


def test_feedback_lists_every_objection_with_where_and_why(registry, deny_deploy):
    verdict = AdmissionChecker(registry, deny_deploy).check(
        chain({"name": "x", "kind": "nope"}, {"name": "deploy"}))
    text = verdict.feedback()
    assert "kind_unknown at nodes[0]" in text and "edge_denied at edges[1]" in text
