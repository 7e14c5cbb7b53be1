"""``grapharc plan`` / ``run`` as thin callers: config resolved once, dollars shown and enforced."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

import grapharc.governed.run
import grapharc.governed.settings
from grapharc.cli.governance_commands import add_governance_commands

GRAPH = {"nodes": [{"name": "gather", "kind": "collect_context"},
                   {"name": "sum", "kind": "summarize"}],
         "edges": [{"source": "__start__", "target": "gather"},
                   {"source": "gather", "target": "sum"}],
         "input": {"goal": "checkout outage"}}
ALLOW = ('version = "s"\n[[rules]]\nid = "n"\nresource = "node"\naction = "allow"\n'
         '[[rules]]\nid = "e"\nresource = "edge"\naction = "allow"\n')


def invoke(*args: str):
    app = typer.Typer()
    add_governance_commands(app)
    return CliRunner().invoke(app, list(args))


@pytest.fixture(autouse=True)
def in_tmp(clean_workdir):
    (clean_workdir / "graph.json").write_text(json.dumps(GRAPH))
    return clean_workdir


@pytest.fixture
def calls(monkeypatch):
    """Count every resolution of the config and every load of the surface."""
    counted = {"load_config": 0, "load_surface": 0}
    counted_in = ((grapharc.governed.settings, "load_config"), (grapharc.governed.run, "load_surface"))
    for module, name in counted_in:
        real = getattr(module, name)

        def counting(*args, _real=real, _name=name, **kwargs):
            counted[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, name, counting)
    return counted


@pytest.mark.parametrize("command", [("plan", "investigate the checkout outage"),
                                     ("run", "graph.json", "--max-iterations", "5")],
                         ids=["plan", "run"])
def test_config_and_surface_are_resolved_once_per_command(calls, command):
    assert invoke(*command).exit_code == 0
    assert calls == {"load_config": 1, "load_surface": 1}


def test_a_dollar_budget_from_the_flag_is_shown_in_the_budget_line_and_json():
    text = invoke("run", "graph.json", "--max-cost-usd", "0.25")
    assert text.exit_code == 0 and "budget    : max_cost_usd=0.25\n" in text.stdout
    document = json.loads(invoke("run", "graph.json", "--max-cost-usd", "0.25", "--json").stdout)
    assert (document["budget"]["max_cost_usd"], document["bounded"]) == (0.25, True)
    assert document["sources"]["max_cost_usd"] == "flag"
    assert document["admission"]["worst_case"]["cost_usd"] == 0.0


def test_a_dollar_budget_comes_from_the_environment_or_grapharc_toml(in_tmp, monkeypatch):
    (in_tmp / "grapharc.toml").write_text("[grapharc]\nmax_cost_usd = 3\n")
    from_file = json.loads(invoke("plan", "outage", "--json").stdout)
    assert (from_file["budget"]["max_cost_usd"], from_file["sources"]["max_cost_usd"]) == (3.0, "file")
    monkeypatch.setenv("GRAPHARC_MAX_COST_USD", "1.5")
    from_env = json.loads(invoke("plan", "outage", "--json").stdout)
    assert (from_env["budget"]["max_cost_usd"], from_env["sources"]["max_cost_usd"]) == (1.5, "env")
    assert from_env["stop"]["reason"] == "goal_met" and from_env["spent"]["unpriced_calls"] == 0


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_a_dollar_budget_that_is_not_a_positive_number_exits_2_naming_it(value):
    result = invoke("run", "graph.json", f"--max-cost-usd={value}")
    assert result.exit_code == 2 and "'--max-cost-usd': must be a number of US dollars above 0" \
        in result.stderr


def test_a_policy_dollar_ceiling_tightens_the_flag(in_tmp):
    (in_tmp / "p.toml").write_text(ALLOW + '[[rules]]\nid = "cap"\nresource = "spend"\n'
                                           'action = "deny"\nmax_cost_usd = 0.1\n')
    document = json.loads(invoke("run", "graph.json", "--policy", "p.toml", "--max-cost-usd", "5",
                                 "--json").stdout)
    assert document["budget"]["max_cost_usd"] == 0.1 and document["executed"]


def test_an_ask_spend_rule_refuses_the_graph_when_nobody_can_approve(in_tmp):
    (in_tmp / "p.toml").write_text(ALLOW + '[[rules]]\nid = "big"\nresource = "spend"\n'
                                           'action = "ask"\nmax_iterations = 1\n')
    result = invoke("run", "graph.json", "--policy", "p.toml", "--max-iterations", "9")
    assert result.exit_code == 1
    assert "spend_approval_required at proposal: spend rule 'big'" in result.stdout


def test_a_policy_with_tool_rules_exits_2_before_anything_runs(in_tmp):
    (in_tmp / "p.toml").write_text(ALLOW + '[[rules]]\nid = "shell"\nresource = "tool"\n'
                                           'action = "allow"\n')
    result = invoke("run", "graph.json", "--policy", "p.toml", "--trace", "t.jsonl",
                    "--unbounded")
    assert result.exit_code == 2 and "rule(s) 'shell' have resource = \"tool\"" in result.stderr
    assert not (in_tmp / "t.jsonl").exists()


@pytest.mark.parametrize("given", ["flag", "env"])
def test_a_traces_store_uri_names_where_a_run_appends_its_trace(in_tmp, monkeypatch, given):
    flags = ["--trace", "file:runs/t.jsonl"] if given == "flag" else []
    if given == "env":
        monkeypatch.setenv("GRAPHARC_TRACE", "file:runs/t.jsonl")

    result = invoke("run", "graph.json", "--max-iterations", "5", *flags)

    assert result.exit_code == 0, result.output
    phases = [json.loads(line)["phase"] for line in (in_tmp / "runs" / "t.jsonl").read_text().splitlines()]
    assert phases[0] == "admission" and "run_start" in phases and phases[-1] == "run_end"
    assert not (in_tmp / "file:runs").exists()  # the URI was not read as a relative path


def test_a_trace_uri_of_no_known_store_exits_2_naming_the_scheme_and_writes_nothing(in_tmp):
    before = sorted(in_tmp.iterdir())

    result = invoke("run", "graph.json", "--max-iterations", "5", "--trace", "nosuch:t.jsonl")

    assert result.exit_code == 2 and "nosuch" in result.stderr, result.output
    assert sorted(in_tmp.iterdir()) == before


def test_a_run_and_the_admission_decision_that_let_it_run_are_one_run_in_the_metrics(in_tmp):
    from grapharc.observe.metrics import metrics

    assert invoke("run", "graph.json", "--max-iterations", "5", "--trace", "t.jsonl").exit_code == 0
    assert invoke("run", "graph.json", "--check-only", "--trace", "c.jsonl").exit_code == 0

    events = [json.loads(line) for line in (in_tmp / "t.jsonl").read_text().splitlines()]
    decision, run_start = events[0], next(e for e in events if e["phase"] == "run_start")
    assert decision["action"] == "decision" and decision["run_id"] == run_start["run_id"]
    ran, checked = (metrics(in_tmp / name).to_document() for name in ("t.jsonl", "c.jsonl"))
    assert [run["status"] for run in ran["runs"].values()] == ["completed"]
    assert [run["status"] for run in checked["runs"].values()] == ["not executed"]
