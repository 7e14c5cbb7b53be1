"""Tenant names compare case-insensitively everywhere a tenant is compared: a ``deny`` for ``acme``
holds for ``ACME`` (and for ``Acme``, full-width ``ＡＣＭＥ`` or `` acme ``), whichever side spells
it differently, in the engine, the settings and the ``run`` command."""

from __future__ import annotations

import json

import pytest

from grapharc.config.settings import load_config
from grapharc.harness.permissions import Decision
from grapharc.policy import PolicyEngine
from grapharc.testing.cli import run_cli

SPELLINGS = ["acme", "ACME", "Acme", "ＡＣＭＥ", " acme "]


def engine_for(rule_tenant: str) -> PolicyEngine:
    return PolicyEngine({"version": "1", "rules": [
        {"id": "acme-no-shell", "resource": "tool", "action": "deny", "tool": "run_command",
         "tenant": rule_tenant},
        {"id": "acme-no-edit", "resource": "node", "action": "deny", "kind": "edit", "tenant": rule_tenant},
        {"id": "acme-ceiling", "resource": "spend", "action": "deny", "max_tokens": 10,
         "tenant": rule_tenant},
        {"id": "tools", "resource": "tool", "action": "allow"},
        {"id": "nodes", "resource": "node", "action": "allow"},
    ]})


@pytest.mark.parametrize("rule_tenant", SPELLINGS)
@pytest.mark.parametrize("run_tenant", SPELLINGS)
def test_a_tenants_rules_hold_for_it_however_either_side_spells_it(rule_tenant, run_tenant):
    engine = engine_for(rule_tenant)
    decided = engine.check_tool("run_command", tenant=run_tenant)
    assert (decided.decision, decided.record.rule_id) == (Decision.DENY, "acme-no-shell")
    assert decided.record.tenant == "acme"  # audited in the one spelling
    assert engine.node_policy(run_tenant).decide("edit").decision is Decision.DENY
    assert engine.spend_ceilings(run_tenant) == {"tokens": 10}
    assert engine.check_spend({"tokens": 11}, tenant=run_tenant).decision is Decision.DENY


def test_another_tenant_and_no_tenant_are_not_held_to_acmes_rules():
    engine = engine_for("ACME")
    assert engine.check_tool("run_command", tenant="globex").decision is Decision.ALLOW
    assert engine.check_tool("run_command").decision is Decision.ALLOW
    assert engine.node_policy("acme-corp").decide("edit").decision is Decision.ALLOW


def test_the_tenant_setting_is_kept_in_the_one_spelling(tmp_path):
    config = load_config({}, cwd=tmp_path, env={"GRAPHARC_TENANT": "ＡＣＭＥ"})
    assert config.value("tenant") == "acme"


@pytest.mark.parametrize(("tenant_in_rule", "given"), [("acme", ["--tenant", "ACME"]),
                                                        ("ACME", ["--tenant", "acme"]),
                                                        ("acme", [])])
def test_grapharc_run_holds_an_acme_rule_for_any_spelling_of_acme(tmp_path, monkeypatch, tenant_in_rule,
                                                                     given):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRAPHARC_TENANT", "Acme")  # the flag, where given, wins
    (tmp_path / "graph.json").write_text(json.dumps({
        "nodes": [{"name": "collect_context"}, {"name": "summarize"}],
        "edges": [{"source": "__start__", "target": "collect_context"},
                  {"source": "collect_context", "target": "summarize"}],
        "input": {"goal": "why did checkout slow down"}}))
    (tmp_path / "tenants.toml").write_text(
        f'version = "3"\n[[rules]]\nid = "acme-no-summaries"\nresource = "node"\naction = "deny"\n'
        f'kind = "summarize"\ntenant = "{tenant_in_rule}"\n[[rules]]\nid = "otherwise"\nresource = "node"\n'
        'action = "allow"\n')
    checked = run_cli(["run", "graph.json", "--policy", "tenants.toml", "--check-only", *given, "--json"])
    assert checked.exit_code == 1, checked.output
    rejections = json.loads(checked.stdout)["admission"]["rejections"]
    assert [(r["code"], r["rule_id"]) for r in rejections] == [("node_denied", "acme-no-summaries")]
