"""A governed graph calling a gateway backend: the run's meter and the SpendMeter agree on dollars."""

from __future__ import annotations

from pathlib import Path

import spend_surface
from gateway_fakes import FakeOpenAI, Reply

from grapharc.gateway import SpendCeilingError, SpendMeter, get_model
from grapharc.governed import configured_trace, prepare_graph, resolve_config, run_graph
from grapharc.planner.proposal import proposal_from_data
from grapharc.runtime.budget import BudgetExceededError
from grapharc.trace.reader import read_events

COSTS = (0.0031, 0.0047, 0.0029, 0.0052, 0.0013)  # the third call crosses $0.01
CEILING = 0.01


def one(kind: str):
    return proposal_from_data({"nodes": [{"name": "n", "kind": kind}],
                               "edges": [{"source": "__start__", "target": "n"}]}, "graph")


def run_ask(fake_openai, monkeypatch, tmp_path: Path, meter: SpendMeter, kind: str = "ask",
            **flags):
    """Run one ``kind`` node through the governed library; return its verdict and run_end event."""
    fake_openai.script(*(Reply(cost=cost) for cost in COSTS))
    model = get_model("openrouter/openai/gpt-4o-mini", base_url=fake_openai.base_url, api_key="k",
                      spend_meter=meter)
    monkeypatch.setitem(spend_surface.MODELS, "ask", model)
    trace = tmp_path / "t.jsonl"
    config = resolve_config("run", {"registry": "spend_surface:build_registry", "trace": trace,
                                    **flags}, cwd=tmp_path, env={})
    governed = prepare_graph(config)
    with configured_trace(config) as writer:
        try:
            outcome = run_graph(governed, one(kind), {}, graph="graph", name="graph", trace=writer)
        except (BudgetExceededError, SpendCeilingError) as exc:
            return exc, list(read_events(trace))[-1]
    return outcome, None


def test_a_dollar_budget_stops_the_run_at_the_call_the_spend_meter_would_stop_it(
        fake_openai, monkeypatch, tmp_path):
    gateway = SpendMeter(CEILING)
    stopped, gateway_end = run_ask(fake_openai, monkeypatch, tmp_path / "gw", gateway,
                                   max_tokens=10**6)
    assert isinstance(stopped, SpendCeilingError)
    gateway_calls = len(fake_openai.completions)

    observer = SpendMeter()
    with FakeOpenAI() as fresh:
        stopped, run_end = run_ask(fresh, monkeypatch, tmp_path / "run", observer,
                                   max_cost_usd=CEILING)
        runtime_calls = len(fresh.completions)
    assert isinstance(stopped, BudgetExceededError) and stopped.dimension == "cost_usd"
    assert gateway_calls == runtime_calls == 3
    assert (run_end["status"], run_end["stop_reason"]) == ("budget_exceeded", "cost_usd")
    assert run_end["cost_usd"] == observer.spent_usd == gateway.spent_usd == stopped.used
    assert gateway_end["cost_usd"] == gateway.spent_usd


def test_the_runs_meter_and_the_spend_meter_agree_when_nothing_stops_the_run(
        fake_openai, monkeypatch, tmp_path):
    observer = SpendMeter()
    outcome, _ = run_ask(fake_openai, monkeypatch, tmp_path, observer, max_cost_usd=1.0)
    assert outcome.executed and observer.calls == len(COSTS)
    run_end = list(read_events(tmp_path / "t.jsonl"))[-1]
    assert run_end["cost_usd"] == observer.spent_usd and run_end["unpriced_calls"] == 0


def test_admission_refuses_a_kind_whose_declared_worst_case_exceeds_the_dollars(
        fake_openai, monkeypatch, tmp_path):
    outcome, _ = run_ask(fake_openai, monkeypatch, tmp_path, SpendMeter(), kind="ask_big",
                         max_cost_usd=CEILING)
    assert outcome.verdict.codes() == ["over_budget"] and not outcome.executed
    assert fake_openai.completions == []
