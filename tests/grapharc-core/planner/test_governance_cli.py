"""``grapharc plan``, ``run`` and ``kinds``: the seed's output, provenance, and bad input exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from grapharc.cli.governance_commands import add_governance_commands
from grapharc.planner import NodeSpec
from grapharc.plugins import BackendInfo, hookimpl
from grapharc.testing import ScriptedChatModel, in_process_source, plugin_host
from grapharc.testing.cli import run_cli

SEED_PLAN = """\
goal      : investigate the checkout outage
model     : scripted
registry  : grapharc.examples.plan_incident:build_registry
kinds     : deploy, patch, triage, verify
policy    : grapharc.examples.plan_incident:build_registry default \
(deny -> deploy, otherwise allow)  [registry-default]
config    : no grapharc.toml (flags and defaults only)

stopped   : goal_met  (the goal check was satisfied)
rounds    : 2 of max 8
   round 1: rejected  nodes=2 executed=False  rejected: edge_denied
   round 2: admitted  nodes=3 executed=True

state     : goal='investigate the checkout outage' notes=['triage ran', 'patch ran', 'verify ran']
"""
GRAPH = {"nodes": [{"name": "gather", "kind": "collect_context"},
                   {"name": "look", "kind": "investigate"}, {"name": "sum", "kind": "summarize"}],
         "edges": [{"source": "__start__", "target": "gather"},
                   {"source": "gather", "target": "look"}, {"source": "look", "target": "sum"}],
         "input": {"goal": "checkout outage"}}


def app() -> typer.Typer:
    governed = typer.Typer()
    add_governance_commands(governed)
    return governed


def invoke(*args: str):
    """The commands through the real entry point, so a usage error reads as a user sees it."""
    return run_cli(args, app=app())


@pytest.fixture(autouse=True)
def in_tmp(clean_workdir):
    return clean_workdir


def graph_file(tmp_path: Path, document: dict | None = None, name: str = "graph.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document or GRAPH))
    return path


def test_plan_prints_exactly_what_the_seed_shows():
    result = invoke("plan", "investigate the checkout outage")
    assert result.exit_code == 0
    assert result.stdout == SEED_PLAN


def test_plan_json_carries_policy_source_and_a_sources_block():
    result = invoke("plan", "investigate the checkout outage", "--json")
    document = json.loads(result.stdout)
    assert document["policy_source"] == "registry-default"
    assert document["sources"]["registry"] == "default" and document["sources"]["max_rounds"] \
        == "default"
    assert [r["rejected"] for r in document["rounds"]] == [["edge_denied"], []]
    assert document["policy"]["digest"] and document["stop"]["reason"] == "goal_met"


def test_a_policy_flag_governs_the_loop_and_is_named_as_the_source(in_tmp):
    (in_tmp / "open.toml").write_text(
        'version = "open"\ndescription = "allow all"\n[[rules]]\nid = "e"\nresource = "edge"\n'
        'action = "allow"\n[[rules]]\nid = "n"\nresource = "node"\naction = "allow"\n')
    result = invoke("plan", "outage", "--policy", "open.toml", "--json")
    document = json.loads(result.stdout)
    assert document["policy_source"] == "flag" and document["sources"]["policy"] == "flag"
    assert document["rounds"][0]["status"] == "admitted"  # deploy allowed by this document
    assert document["policy_line"].endswith("(allow all)  [flag]")


def test_grapharc_toml_supplies_values_and_the_config_line_says_so(in_tmp):
    (in_tmp / "rules").mkdir()
    (in_tmp / "rules" / "p.toml").write_text(
        'version = "cfg"\n[[rules]]\nid = "d"\nresource = "edge"\naction = "deny"\n'
        'target = "deploy"\n[[rules]]\nid = "e"\nresource = "edge"\naction = "allow"\n'
        '[[rules]]\nid = "n"\nresource = "node"\naction = "allow"\n')
    (in_tmp / "grapharc.toml").write_text('[grapharc]\npolicy = "rules/p.toml"\nmax_rounds = 6\n')
    result = invoke("plan", "outage")
    assert result.exit_code == 0
    assert f"config    : {in_tmp / 'grapharc.toml'} (max_rounds=file, policy=file)" in result.stdout
    assert "rounds    : 2 of max 6" in result.stdout and "[config]" in result.stdout


def test_zero_config_plan_generates_a_policy_once_then_reads_it(in_tmp):
    draft = ('version = "g"\ndescription = "drafted"\n[[rules]]\nid = "no-apply"\n'
             'resource = "node"\naction = "deny"\nkind = "apply_change"\n[[rules]]\nid = "n"\n'
             'resource = "node"\naction = "allow"\n[[rules]]\nid = "e"\nresource = "edge"\n'
             'action = "allow"\n')
    plan = json.dumps({"nodes": [{"name": "c", "kind": "collect_context"},
                                 {"name": "s", "kind": "summarize"}],
                       "edges": [{"source": "__start__", "target": "c"},
                                 {"source": "c", "target": "s"}]})
    scripts = {"first": [draft, plan], "second": [plan]}

    class Drafter:
        @staticmethod
        @hookimpl
        def register_model_backends(register):
            register(BackendInfo(prefix="drafter", vendor="test",
                                 factory=lambda model: ScriptedChatModel(responses=scripts[model])))

    source = in_process_source(Drafter, name="drafter-plugin")
    with plugin_host(source, installed=False):
        first = json.loads(invoke("plan", "outage", "--registry", "plugins", "--model",
                                  "drafter/first", "--json").stdout)
        second = json.loads(invoke("plan", "outage", "--registry", "plugins", "--model",
                                   "drafter/second", "--json").stdout)
    assert (first["policy_source"], first["policy"]["generated_now"]) == ("generated", True)
    assert (second["policy_source"], second["policy"]["generated_now"]) == ("generated", False)
    assert (in_tmp / ".grapharc" / "generated-policy.toml").read_text().startswith("# REVIEW THIS")
    assert first["stop"]["reason"] == "goal_met"


def test_a_registry_without_a_scripted_planner_needs_a_model():
    result = invoke("plan", "outage", "--registry", "plugins")
    assert result.exit_code == 2 and "--model" in result.stderr


def test_run_refuses_an_unbounded_run_unless_told(in_tmp):
    path = graph_file(in_tmp)
    refused = invoke("run", str(path))
    assert refused.exit_code == 2 and "no budget is set" in refused.stderr
    assert invoke("run", str(path), "--unbounded").exit_code == 0


def test_run_executes_an_admitted_graph_within_its_budget(in_tmp):
    result = invoke("run", str(graph_file(in_tmp)), "--max-iterations", "5", "--json")
    document = json.loads(result.stdout)
    assert result.exit_code == 0 and document["executed"]
    assert document["state"]["summary"].startswith("1 finding(s)")


def test_a_policy_spend_ceiling_is_a_budget(in_tmp):
    (in_tmp / "p.toml").write_text(
        'version = "s"\n[[rules]]\nid = "cap"\nresource = "spend"\naction = "deny"\n'
        'max_iterations = 2\n[[rules]]\nid = "n"\nresource = "node"\naction = "allow"\n'
        '[[rules]]\nid = "e"\nresource = "edge"\naction = "allow"\n')
    result = invoke("run", str(graph_file(in_tmp)), "--policy", "p.toml", "--json")
    document = json.loads(result.stdout)
    assert result.exit_code == 1
    assert document["admission"]["failed"] == ["over_budget", "spend_denied"]
    assert document["admission"]["rejections"][1]["rule_id"] == "cap"
    assert document["budget"]["max_iterations"] == 2


def test_check_only_executes_nothing(in_tmp):
    trace = in_tmp / "t.jsonl"
    result = invoke("run", str(graph_file(in_tmp)), "--check-only", "--trace", str(trace))
    assert result.exit_code == 0 and "check-only: nothing was executed" in result.stdout
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [(e["phase"], e["action"], e["status"]) for e in events] == [
        ("admission", "decision", "admitted")]


def test_a_graph_the_policy_refuses_exits_1_and_runs_nothing(in_tmp):
    document = {"nodes": [{"name": "fix", "kind": "apply_change"}],
                "edges": [{"source": "__start__", "target": "fix"}]}
    result = invoke("run", str(graph_file(in_tmp, document)), "--max-iterations", "5")
    assert result.exit_code == 1
    assert "node_denied at nodes[0]" in result.stdout and "state" not in result.stdout


@pytest.mark.parametrize(("content", "message"), [
    ('{"nodes": [', "invalid JSON at line 1, column 12"),
    ('{"nodes": [{"name": "x", "fn": "print"}]}', "nodes[0].fn: Extra inputs"),
    ('{"nodes": [{"name": "x"}], "input": 3}', "input must be an object"),
    ("[" * 50_000, "nested too deeply"),
])
def test_bad_graph_files_exit_2_naming_where(in_tmp, content, message):
    path = in_tmp / "bad.json"
    path.write_text(content)
    result = invoke("run", str(path), "--unbounded")
    assert result.exit_code == 2 and message in result.stderr


def test_binary_files_and_directories_exit_2(in_tmp):
    (in_tmp / "bin.json").write_bytes(b"\x7fELF\x00\x00")
    assert "binary" in invoke("run", str(in_tmp / "bin.json"), "--unbounded").stderr
    result = invoke("run", str(in_tmp), "--unbounded")
    assert result.exit_code == 2 and "is a directory" in result.stderr


@pytest.mark.parametrize(("policy", "message"), [
    ("version = \n", "is not valid TOML"),
    ('version = "1"\n[[rules]]\nid = "x"\nresource = "network"\naction = "deny"\n',
     "rules[0] (rule 'x')"),
    ('version = "1"\n[[rules]]\nid = "t"\nresource = "edge"\naction = "deny"\ntarget = "deplyo"\n',
     "rule 't' names kind 'deplyo'"),
])
def test_bad_policies_exit_2_before_anything_is_checked(in_tmp, policy, message):
    (in_tmp / "p.toml").write_text(policy)
    result = invoke("run", str(graph_file(in_tmp)), "--policy", "p.toml", "--unbounded")
    assert result.exit_code == 2 and message in result.stderr


def test_errors_are_json_documents_under_json(in_tmp):
    result = invoke("run", str(in_tmp / "missing.json"), "--json", "--unbounded")
    document = json.loads(result.stdout)
    assert result.exit_code == 2 and document["ok"] is False
    assert document["error"]["code"] == "UsageError"
    assert "graph file" in document["error"]["message"] and "does not exist" in document["error"]["message"]


def test_absurd_budget_numbers_are_refused(in_tmp):
    result = invoke("run", str(graph_file(in_tmp)), "--max-seconds", "1e300")
    assert result.exit_code == 2 and "'--max-seconds': must be a number of seconds" in result.stderr


def test_kinds_lists_every_kind_with_its_distribution():
    class Extra:
        @staticmethod
        @hookimpl
        def register_node_kinds(register):
            register(NodeSpec(name="triage_ticket", factory=lambda spec: None))

    with plugin_host(in_process_source(Extra, name="third-party"), installed=False):
        document = json.loads(invoke("kinds", "--json").stdout)
        text = invoke("kinds").stdout
    sources = {row["kind"]: row["source"] for row in document["kinds"]}
    assert sources["triage_ticket"] == "third-party" and sources["verify"] == "grapharc-core"
    assert "triage_ticket" in text and "third-party" in text


def test_kinds_of_a_named_registry_name_their_module():
    document = json.loads(invoke("kinds", "--json", "--registry",
                                 "grapharc.examples.plan_incident:build_registry").stdout)
    assert sorted(row["kind"] for row in document["kinds"]) == ["deploy", "patch", "triage",
                                                                "verify"]
    assert invoke("kinds", "--registry", "no.such:thing").exit_code == 2


SCRIPT = ("import sys, typer\nfrom grapharc.cli.governance_commands import add_governance_commands\n"
          "app = typer.Typer()\nadd_governance_commands(app)\napp(sys.argv[1:])\n")


def test_a_real_process_prints_the_seed_plan_and_refuses_an_unbounded_run(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHARC_")}
    plan = subprocess.run([sys.executable, "-c", SCRIPT, "plan",
                           "investigate the checkout outage"], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120)
    assert plan.returncode == 0 and plan.stdout == SEED_PLAN
    path = graph_file(tmp_path)
    run = subprocess.run([sys.executable, "-c", SCRIPT, "run", str(path)], capture_output=True,
                         text=True, cwd=tmp_path, env=env, timeout=120)
    assert run.returncode == 2 and "no budget is set" in run.stderr and run.stdout == ""


@pytest.mark.parametrize("goal", ["", "   "])
def test_an_empty_goal_is_refused_before_anything_runs(in_tmp, goal):
    result = invoke("plan", goal, "--json", "--trace", "t.jsonl")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "EmptyGoalError"
    assert not (in_tmp / "t.jsonl").exists()
