"""The policy engine: tiered, scoped, audited decisions over nodes, edges, tools and spend."""

from __future__ import annotations

import hashlib
import json

import pytest

from grapharc.harness.permissions import Decision, PermissionPolicy
from grapharc.planner import AdmissionChecker, CostEstimate, NodeRegistry, NodeSpec, Subgraph
from grapharc.policy import PolicyEngine

DOCUMENT = """\
version = "2026-08-01"
description = "deny -> deploy, otherwise allow"

[[rules]]
id = "no-deploy"
resource = "edge"
action = "deny"
target = "deploy"
reason = "deploys need a change window"

[[rules]]
id = "acme-may-deploy"
resource = "edge"
action = "allow"
target = "deploy"
tenant = "acme"

[[rules]]
id = "edges"
resource = "edge"
action = "allow"

[[rules]]
id = "no-edit-for-guests"
resource = "node"
action = "deny"
kind = "edit"
tenant = "guest"

[[rules]]
id = "nodes"
resource = "node"
action = "allow"

[[rules]]
id = "no-shell"
resource = "tool"
action = "deny"
tool = "run_command"
reason = "no shell from the model"

[[rules]]
id = "writes-need-review"
resource = "tool"
action = "ask"
tool = "write_*"
route = "reviewers"

[[rules]]
id = "reads"
resource = "tool"
action = "allow"
tool = "read_*"

[[rules]]
id = "token-cap"
resource = "spend"
action = "deny"
max_tokens = 5000

[[rules]]
id = "big-runs-ask"
resource = "spend"
action = "ask"
max_tokens = 1000
"""


@pytest.fixture
def policy_file(tmp_path):
    path = tmp_path / "policy.toml"
    path.write_text(DOCUMENT)
    return path


@pytest.fixture
def engine(policy_file):
    return PolicyEngine.from_file(policy_file)


def registry():
    factory = lambda spec: lambda state: {}  # noqa: E731
    return NodeRegistry([NodeSpec(name=k, factory=factory, worst_case=CostEstimate(tokens=10))
                         for k in ("search", "edit", "deploy")]).freeze()


def proposal(kind: str, name: str = "n") -> Subgraph:
    return Subgraph.model_validate({"nodes": [{"name": name, "kind": kind}],
                                    "edges": [{"source": "__start__", "target": name}]})


def test_a_broad_deny_beats_a_narrow_tenant_allow(engine):
    assert engine.edge_policy("acme").decide("search", "deploy").rule_id == "no-deploy"
    assert engine.edge_policy("acme").decide("search", "deploy").decision is Decision.DENY


def test_tenant_scoped_rules_apply_only_to_their_tenant(engine):
    assert engine.node_policy("guest").decide("edit").decision is Decision.DENY
    assert engine.node_policy("acme").decide("edit").decision is Decision.ALLOW
    assert engine.node_policy().decide("edit").decision is Decision.ALLOW


def test_the_compiled_edge_and_node_policies_drive_admission(engine):
    checker = AdmissionChecker(registry(), engine.edge_policy("guest"),
                               node_policy=engine.node_policy("guest"))
    assert checker.check(proposal("deploy", "harmless")).codes() == ["edge_denied"]
    assert checker.check(proposal("edit")).codes() == ["node_denied"]
    assert checker.check(proposal("search")).admitted


def test_admission_audit_records_name_rule_version_and_document_digest(engine, policy_file):
    checker = AdmissionChecker(registry(), engine.edge_policy())
    record = checker.check(proposal("deploy")).audit[0]
    assert (record.rule_id, record.reason, record.policy_version) == (
        "no-deploy", "deploys need a change window", "2026-08-01")
    assert record.document_digest == hashlib.sha256(policy_file.read_bytes()).hexdigest()


def test_unmatched_is_deny_in_every_half_the_document_governs():
    engine = PolicyEngine({"version": "narrow", "rules": [
        {"id": "n", "resource": "node", "action": "allow", "kind": "search"},
        {"id": "e", "resource": "edge", "action": "allow", "source": "search"},
        {"id": "t", "resource": "tool", "action": "allow", "tool": "grep"}]})
    assert engine.edge_policy().decide("a", "b").decision is Decision.DENY
    assert engine.node_policy().decide("a").decision is Decision.DENY
    assert engine.check_tool("read_file").decision is Decision.DENY


def test_check_tool_is_tiered_and_audited(engine):
    assert engine.check_tool("run_command").decision is Decision.DENY
    asked = engine.check_tool("write_file")
    assert asked.decision is Decision.ASK and asked.route == "reviewers"
    assert engine.check_tool("read_file").decision is Decision.ALLOW
    assert engine.check_tool("delete_everything").record.rule_id == ""
    assert [r.subject for r in engine.audit_log] == [
        "run_command", "write_file", "read_file", "delete_everything"]


def test_a_tool_decided_again_is_looked_up_not_matched_and_still_audited(engine, monkeypatch):
    from grapharc.decisions.tool_rules import PermissionRule

    matched: list[str] = []
    matches = PermissionRule.matches
    monkeypatch.setattr(PermissionRule, "matches",
                        lambda rule, tool: matched.append(tool) or matches(rule, tool))
    flags = PermissionPolicy.from_flags(deny=["read_secrets"])
    first = engine.check_tool("read_file", flags=flags)
    rules_consulted = len(matched)
    again = [engine.check_tool("read_file", flags=flags) for _ in range(3)]
    assert rules_consulted > 0 and len(matched) == rules_consulted  # the rules were walked once
    assert all(decided == first for decided in again)
    assert [r.subject for r in engine.audit_log] == ["read_file"] * 4  # every call is on the log
    engine.check_tool("read_file", flags=PermissionPolicy.from_flags(deny=["read_file"]), tenant="acme")
    assert engine.audit_log[-1].decision == "deny"  # other flags (and tenant): decided afresh


def test_a_document_deny_beats_a_cli_flag_allow(engine):
    flags = PermissionPolicy.from_flags(allow=["run_command", "*"])
    decided = engine.check_tool("run_command", flags=flags)
    assert decided.decision is Decision.DENY and decided.record.rule_id == "no-shell"


def test_a_cli_flag_deny_narrows_a_document_allow(engine):
    flags = PermissionPolicy.from_flags(deny=["read_secrets"])
    assert engine.check_tool("read_secrets", flags=flags).decision is Decision.DENY
    assert engine.check_tool("read_file", flags=flags).decision is Decision.ALLOW


def test_denied_tools_are_invisible_to_the_model(engine):
    visible = engine.permission_policy().visible(["read_file", "write_file", "run_command", "x"])
    assert visible == ["read_file", "write_file"]


def test_approval_routing_asks_the_routes_approver_and_fails_closed(engine):
    asked = engine.check_tool("write_file")
    requests = []
    router = engine.approval_router({"reviewers": lambda req: requests.append(req) or True})
    assert router.resolve(asked) is Decision.ALLOW
    assert requests[0].rule_id == "writes-need-review" and requests[0].subject == "write_file"
    assert engine.approval_router({}).resolve(asked) is Decision.DENY
    assert engine.approval_router({"reviewers": lambda req: 1 / 0}).resolve(asked) is Decision.DENY
    assert engine.approval_router({"reviewers": lambda req: "yes"}).resolve(asked) is Decision.DENY
    assert [r.decision for r in engine.audit_log if r.resource == "approval"] == [
        "allow", "deny", "deny", "deny"]


def test_settle_answers_with_the_final_decisions_record(engine):
    asked = engine.check_tool("write_file")
    approved = engine.approval_router({"reviewers": lambda req: True}).settle(asked)
    assert (approved.resource, approved.decision, approved.reason) == (
        "approval", "allow", "approved via route 'reviewers'")
    denied = engine.check_tool("run_command")
    assert engine.approval_router({}).settle(denied) is denied.record  # deny stands, nothing asked


def test_the_audit_log_keeps_the_newest_decisions_only(engine):
    # an engine lives as long as its server: its in-memory log must not grow without end
    from grapharc.policy.engine import AUDIT_LOG_SIZE

    for run in range(AUDIT_LOG_SIZE + 5):
        engine.check_spend({"tokens": 10}, subject=f"run-{run}")
    assert len(engine.audit_log) == AUDIT_LOG_SIZE
    oldest, newest = engine.audit_log[0], engine.audit_log[-1]
    assert (oldest.subject, newest.subject) == ("run-5", f"run-{AUDIT_LOG_SIZE + 4}")


def test_spend_rules_are_ceilings_deny_before_ask(engine):
    assert engine.spend_ceilings() == {"tokens": 5000}
    assert engine.check_spend({"tokens": 6000}).record.rule_id == "token-cap"
    assert engine.check_spend({"tokens": 2000}).decision is Decision.ASK
    assert engine.check_spend({"tokens": 10}).decision is Decision.ALLOW


def test_a_document_that_never_was_a_file_gets_a_canonical_digest():
    document = {"version": "1", "rules": [{"id": "a", "resource": "node", "action": "allow"}]}
    reordered = json.loads(json.dumps(document, sort_keys=True))
    assert PolicyEngine(document).digest == PolicyEngine(reordered).digest


def test_rules_naming_kinds_the_registry_lacks_are_found(engine):
    typo = PolicyEngine({"version": "1", "rules": [
        {"id": "t", "resource": "edge", "action": "deny", "target": "deplyo"},
        {"id": "g", "resource": "node", "action": "allow", "kind": "dep*"}]})
    assert typo.unknown_kinds(["deploy"]) == [
        "rule 't' names kind 'deplyo', which the registry does not have"]
    assert engine.unknown_kinds(["search", "edit", "deploy"]) == []
