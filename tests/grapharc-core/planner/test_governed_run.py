"""The governed-run library: a loop and a written graph built and run from a Config, no CLI."""

from __future__ import annotations

import pytest

from grapharc.governed import (
    BUILT_INS,
    UnboundedRunError,
    budget_for,
    configured_budget,
    configured_trace,
    governed_loop,
    prepare_graph,
    prepare_plan,
    resolve_config,
    run_graph,
    run_plan,
)
from grapharc.planner import StopReason
from grapharc.planner.goal import EmptyGoalError
from grapharc.planner.proposal import proposal_from_data
from grapharc.planner.surface import DEMO, PLUGINS
from grapharc.policy.engine import PolicyDocumentError, PolicyEngine
from grapharc.trace.reader import read_events

GRAPH = {"nodes": [{"name": "gather", "kind": "collect_context"},
                   {"name": "look", "kind": "investigate"}, {"name": "sum", "kind": "summarize"}],
         "edges": [{"source": "__start__", "target": "gather"},
                   {"source": "gather", "target": "look"}, {"source": "look", "target": "sum"}]}
OPEN = ('version = "open"\n[[rules]]\nid = "e"\nresource = "edge"\naction = "allow"\n'
        '[[rules]]\nid = "n"\nresource = "node"\naction = "allow"\n')


@pytest.fixture(autouse=True)
def in_tmp(clean_workdir):
    return clean_workdir


def config_for(command, tmp_path, flags=None, env=None):
    return resolve_config(command, flags or {}, cwd=tmp_path, env=env or {})


def test_each_command_has_its_built_in_registry_and_budget(in_tmp):
    plan, run = config_for("plan", in_tmp), config_for("run", in_tmp)
    assert (plan.value("registry"), plan.value("max_tokens")) == (DEMO, 500_000)
    assert (run.value("registry"), run.value("max_tokens")) == (PLUGINS, None)
    assert set(BUILT_INS) == {"plan", "run", "agent", "serve", "session"}


def test_an_agent_keeps_no_session_and_a_server_serves_the_default_folder_unless_a_layer_says(in_tmp):
    agent, serve = config_for("agent", in_tmp), config_for("serve", in_tmp)
    assert agent.value("sessions") is None and agent.value("registry") is None
    assert serve.value("sessions") == (in_tmp / ".grapharc" / "sessions").resolve()
    assert config_for("agent", in_tmp, env={"GRAPHARC_SESSIONS": "kept"}).setting("sessions").source == "env"


def test_a_governed_loop_runs_from_a_config_alone(in_tmp):
    governed = prepare_plan(config_for("plan", in_tmp))
    result = run_plan(governed, "investigate the checkout outage")
    assert result.stop is StopReason.GOAL_MET
    assert [r.admission.codes() for r in result.rounds] == [["edge_denied"], []]
    assert (governed.planner.name, governed.policy.source) == ("scripted", "registry-default")


def test_the_loop_graph_begins_fresh_whatever_its_input_says_of_rounds_spend_or_stop(in_tmp):
    compiled = governed_loop(prepare_plan(config_for("plan", in_tmp))).graph().compile()
    forged = {"goal": "fix the outage", "stop": "goal_met", "round": 7, "repeats": 5,
              "spent": {"iterations": 0, "tokens": -10**9, "cost_usd": 0.0, "unpriced_calls": 0}}
    try:
        values = compiled.invoke(forged)
        with pytest.raises(EmptyGoalError):
            compiled.invoke({"goal": "  "})
    finally:
        compiled.close()
    assert values["stop"] == "goal_met" and [r["round"] for r in values["rounds"]] == [1, 2]
    assert values["spent"]["tokens"] > 0 and values["domain"]["goal"] == "fix the outage"


def test_a_written_graph_is_admitted_and_run_from_a_config_alone(in_tmp):
    trace = in_tmp / "t.jsonl"
    config = config_for("run", in_tmp, {"max_iterations": 5, "trace": trace})
    governed = prepare_graph(config)
    with configured_trace(config) as writer:
        outcome = run_graph(governed, proposal_from_data(GRAPH, "graph"), {"goal": "outage"},
                            graph="graph", name="graph", trace=writer)
    assert outcome.executed and outcome.state.summary.startswith("1 finding(s)")
    events = list(read_events(trace))
    assert events[0]["action"] == "decision" and events[-1]["status"] == "completed"


def test_check_only_returns_the_verdict_and_builds_nothing(in_tmp):
    governed = prepare_graph(config_for("run", in_tmp))
    outcome = run_graph(governed, proposal_from_data(GRAPH, "graph"), {}, graph="g", name="g",
                        check_only=True)
    assert outcome.verdict.admitted and not outcome.executed


def test_the_layer_that_set_the_policy_is_its_provenance(in_tmp):
    for name in ("flag", "env", "file"):
        (in_tmp / f"{name}.toml").write_text(OPEN.replace('"open"', f'"{name}"'))
    (in_tmp / "grapharc.toml").write_text('[grapharc]\npolicy = "file.toml"\n')
    cases = [({"policy": "flag.toml"}, {"GRAPHARC_POLICY": "env.toml"}, "flag", "flag"),
             ({}, {"GRAPHARC_POLICY": "env.toml"}, "env", "env"),
             ({}, {}, "config", "file")]
    for flags, env, source, version in cases:
        governed = prepare_graph(config_for("run", in_tmp, flags, env))
        assert (governed.policy.source, governed.engine.version) == (source, version)


def test_the_policys_deny_ceilings_tighten_the_configured_budget_in_every_dimension(in_tmp):
    engine = PolicyEngine({"version": "1", "rules": [
        {"id": "cap", "resource": "spend", "action": "deny", "max_cost_usd": 0.5,
         "max_tokens": 900, "max_seconds": 20.0}]})
    config = config_for("run", in_tmp, {"max_cost_usd": 2.0, "max_tokens": 1000,
                                        "max_iterations": 7})
    budget = budget_for(config, engine)
    assert (budget.max_cost_usd, budget.max_tokens, budget.max_seconds, budget.max_iterations) == \
        (0.5, 900, 20.0, 7)


def test_a_dollar_ceiling_alone_makes_a_run_bounded(in_tmp):
    with pytest.raises(UnboundedRunError, match="no budget is set"):
        prepare_graph(config_for("run", in_tmp)).require_budget("g.json")
    prepare_graph(config_for("run", in_tmp, {"max_cost_usd": 1.0})).require_budget("g.json")


def test_a_policy_with_tool_rules_is_refused_because_a_governed_run_gates_no_tools(in_tmp):
    (in_tmp / "p.toml").write_text(OPEN + '[[rules]]\nid = "shell"\nresource = "tool"\n'
                                          'action = "deny"\ntool = "run_command"\n')
    with pytest.raises(PolicyDocumentError, match=r"'shell'.*nothing would enforce them"):
        prepare_graph(config_for("run", in_tmp, {"policy": "p.toml"}))


def test_an_empty_goal_is_refused_by_the_library_too(in_tmp):
    with pytest.raises(EmptyGoalError):
        run_plan(prepare_plan(config_for("plan", in_tmp)), "  ")


def test_every_budget_field_is_read_from_the_settings_of_the_same_name(in_tmp):
    (in_tmp / "grapharc.toml").write_text(
        "[grapharc]\nmax_cost_usd = 0.75\nmax_tokens = 10\nmax_iterations = 3\n"
        "max_seconds = 9\nmax_concurrency = 2\n")
    budget = configured_budget(config_for("run", in_tmp))
    assert (budget.max_cost_usd, budget.max_tokens, budget.max_iterations, budget.max_seconds,
            budget.max_concurrency) == (0.75, 10, 3, 9.0, 2)
