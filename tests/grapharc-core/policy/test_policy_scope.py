"""A policy document governs only the resources it has rules for; one that governs nothing is refused."""

from __future__ import annotations

import json

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from grapharc.cli.governance_commands import add_governance_commands
from grapharc.governed import prepare_graph, resolve_config
from grapharc.harness.permissions import Decision
from grapharc.policy import PolicyDocumentError, PolicyEngine

SEED_POLICY = """\
version = "seed"
description = "deny -> deploy, otherwise allow"

[[rules]]
id = "no-deploy"
resource = "edge"
action = "deny"
target = "deploy"

[[rules]]
id = "otherwise-allow"
resource = "edge"
action = "allow"
"""
NOT_GOVERNED = "the policy has no node rules, so it does not govern which kinds may be proposed"


def invoke(*args: str):
    app = typer.Typer()
    add_governance_commands(app)
    return CliRunner().invoke(app, list(args))


@pytest.fixture(autouse=True)
def in_tmp(clean_workdir):
    (clean_workdir / "seed.toml").write_text(SEED_POLICY)
    return clean_workdir


def test_an_edge_only_document_lets_every_kind_be_proposed_and_says_why():
    engine = PolicyEngine.from_file("seed.toml")

    decided = engine.node_policy().decide("deploy")

    assert decided.decision is Decision.ALLOW and decided.reason == NOT_GOVERNED
    assert engine.scope_note() == NOT_GOVERNED
    assert engine.edge_policy().decide("patch", "deploy").rule_id == "no-deploy"


def test_a_node_only_document_lets_permitted_kinds_be_wired_in_any_order():
    engine = PolicyEngine({"version": "1", "rules": [
        {"id": "no-deploy", "resource": "node", "action": "deny", "kind": "deploy"},
        {"id": "rest", "resource": "node", "action": "allow"}]})

    assert engine.edge_policy().decide("triage", "patch").decision is Decision.ALLOW
    assert engine.node_policy().decide("deploy").decision is Decision.DENY
    assert "no edge rules" in engine.scope_note() and "node" not in engine.scope_note()


def test_the_seeds_example_written_as_a_document_plans_like_the_registry_default():
    default = json.loads(invoke("plan", "investigate the outage", "--json").stdout)
    seeded = invoke("plan", "investigate the outage", "--json", "--policy", "seed.toml")
    written = json.loads(seeded.stdout)

    assert seeded.exit_code == 0, seeded.output
    assert [(r["status"], r["rejected"]) for r in written["rounds"]] == \
        [(r["status"], r["rejected"]) for r in default["rounds"]] == \
        [("rejected", ["edge_denied"]), ("admitted", [])]
    assert written["state"] == default["state"]
    assert (written["policy_note"], default["policy_note"]) == (NOT_GOVERNED, "")


@pytest.mark.parametrize("command", [["plan", "investigate the outage"],
                                     ["run", "graph.json", "--check-only"]])
def test_plan_and_run_say_in_one_line_what_the_policy_does_not_govern(in_tmp, command):
    (in_tmp / "graph.json").write_text(json.dumps({
        "nodes": [{"name": "verify"}], "edges": [{"source": "__start__", "target": "verify"}]}))
    registry = ["--registry", "grapharc.examples.plan_incident:build_registry"] \
        if command[0] == "run" else []

    result = invoke(*command, *registry, "--policy", "seed.toml")

    lines = result.stdout.splitlines()
    policy = next(i for i, line in enumerate(lines) if line.startswith("policy    :"))
    assert lines[policy + 1].strip() == NOT_GOVERNED


def test_a_document_with_no_node_edge_or_spend_rules_is_refused_for_a_governed_run(in_tmp):
    (in_tmp / "empty.toml").write_text('version = "1"\n')
    with pytest.raises(PolicyDocumentError, match="would govern nothing"):
        prepare_graph(resolve_config("run", {"policy": "empty.toml"}, cwd=in_tmp, env={}))


def rule(index: int, resource: str, action: str, glob: str) -> dict[str, object]:
    """One document rule: spend rules are deny ceilings, node rules match kinds, edge rules targets."""
    if resource == "spend":
        return {"id": f"r{index}", "resource": "spend", "action": "deny", "max_tokens": 5}
    matched = {"kind": glob} if resource == "node" else {"target": glob}
    return {"id": f"r{index}", "resource": resource, "action": action, **matched}


rules = st.lists(st.tuples(st.sampled_from(["node", "edge", "spend"]),
                           st.sampled_from(["allow", "deny"]),
                           st.sampled_from(["*", "deploy", "patch"])), max_size=4)


@settings(max_examples=150, deadline=None)
@given(rules, st.sampled_from(["deploy", "patch", "triage"]))
def test_a_resource_with_no_rules_is_never_denied_and_one_with_rules_is_judged_by_them(drawn, kind):
    engine = PolicyEngine({"version": "1", "rules": [rule(i, *parts) for i, parts in enumerate(drawn)]})
    for resource, decided in (("node", engine.node_policy().decide(kind)),
                              ("edge", engine.edge_policy().decide("triage", kind))):
        if any(parts[0] == resource for parts in drawn):
            assert decided.rule_id or decided.decision is Decision.DENY
        else:
            assert decided.decision is Decision.ALLOW and "does not govern" in decided.reason
