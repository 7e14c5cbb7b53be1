"""A gateway model called inside a GraphARC node: its cost_usd lands on the trace and the budget."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from gateway_fakes import Reply

from grapharc import Budget, GraphARC, GraphARCState
from grapharc.gateway import SpendCeilingError, SpendMeter, get_model
from grapharc.runtime.graph import END, START


class State(GraphARCState):
    reply: str = ""


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def one_node_graph(node, trace: Path, budget: Budget | None = None):
    graph = GraphARC(State, name="ask", trace=trace, budget=budget)
    graph.add_node("ask", node, writes={"reply"})
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    return graph.compile()


@pytest.fixture
def model_for(fake_openai):
    def build(spec: str, **kwargs):
        return get_model(spec, base_url=fake_openai.base_url, api_key="k", **kwargs)
    return build


def test_a_providers_cost_reaches_the_nodes_end_event_and_the_runs_budget(model_for, fake_openai, tmp_path):
    model = model_for("openrouter/anthropic/claude-haiku-4.5")
    fake_openai.script(Reply(content="answer", cost=0.012, prompt_tokens=40, cached_tokens=30,
                             completion_tokens=9))
    trace = tmp_path / "trace.jsonl"
    def ask(state: State) -> dict:
        return {"reply": str(model.invoke("q").content)}

    one_node_graph(ask, trace, Budget(max_tokens=1000)).invoke({})
    end = next(e for e in events(trace) if e["phase"] == "end")
    run_end = events(trace)[-1]
    assert (end["tokens"], end["cost_usd"]) == (49, 0.012)
    assert (run_end["tokens"], run_end["cost_usd"], run_end["unpriced_calls"]) == (49, 0.012, 0)


def test_token_only_usage_is_counted_unpriced_by_the_run(model_for, tmp_path):
    model = model_for("openai/gpt-4o-mini")
    trace = tmp_path / "trace.jsonl"
    one_node_graph(lambda s: {"reply": str(model.invoke("q").content)}, trace).invoke({})
    run_end = events(trace)[-1]
    assert (run_end["tokens"], run_end["cost_usd"], run_end["unpriced_calls"]) == (17, 0.0, 1)


def test_price_per_million_makes_openai_calls_priced_on_the_trace(model_for, fake_openai, tmp_path):
    model = model_for("openai/gpt-4o-mini", price_per_million=(1.0, 2.0))
    fake_openai.script(Reply(prompt_tokens=1000, completion_tokens=500))
    trace = tmp_path / "trace.jsonl"
    one_node_graph(lambda s: {"reply": str(model.invoke("q").content)}, trace).invoke({})
    assert events(trace)[-1]["cost_usd"] == pytest.approx(0.002)
    assert events(trace)[-1]["unpriced_calls"] == 0


def test_a_streamed_call_in_an_async_node_lands_its_cost(model_for, fake_openai, tmp_path):
    model = model_for("openrouter/openai/gpt-4o-mini")
    fake_openai.script(Reply(content="streamed words", cost=0.5))

    async def ask(state: State) -> dict:
        return {"reply": "".join([str(c.content) async for c in model.astream("q")])}

    trace = tmp_path / "trace.jsonl"
    assert asyncio.run(one_node_graph(ask, trace).ainvoke({}))["reply"] == "streamed words"
    end = next(e for e in events(trace) if e["phase"] == "end")
    assert (end["tokens"], end["cost_usd"]) == (17, 0.5)


def test_the_call_that_crosses_a_spend_ceiling_is_still_on_the_runs_budget(model_for, fake_openai, tmp_path):
    model = model_for("openrouter/openai/gpt-4o-mini", spend_meter=SpendMeter(0.01))
    fake_openai.script(Reply(cost=0.012))
    trace = tmp_path / "trace.jsonl"
    with pytest.raises(SpendCeilingError):
        one_node_graph(lambda s: {"reply": str(model.invoke("q").content)}, trace).invoke({})
    run_end = events(trace)[-1]
    assert (run_end["status"], run_end["stop_reason"]) == ("error", "SpendCeilingError")
    assert (run_end["tokens"], run_end["cost_usd"]) == (17, 0.012)
