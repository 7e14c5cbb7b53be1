"""A real backend's calls carry their model spec and split tokens to the trace, and a rate card
prices them model by model: an agent run through the CLI, and a node that calls two models."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gateway_fakes import Reply

from grapharc import GraphARC, GraphARCState
from grapharc.gateway import get_model
from grapharc.observe.cost import Rate, RateCard, cost
from grapharc.runtime.graph import END, START
from grapharc.trace.reader import read_events

CARD = """
[default]
per_million = 100.0

[models."openai/gpt-4o-mini"]
input_per_million = 0.15
output_per_million = 0.6
"""


def grapharc(cwd: Path, base_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": base_url}
    return subprocess.run([sys.executable, "-m", "grapharc.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_an_agent_on_an_openai_compatible_server_is_priced_at_its_models_rate(fake_openai, clean_environment):
    work = clean_environment
    (work / "ws").mkdir()
    (work / "ws" / "notes.txt").write_text("hello\n")
    (work / "rates.toml").write_text(CARD)
    fake_openai.script(
        Reply(content="", tool_calls=[{"name": "read_file", "arguments": {"path": "notes.txt"}}],
              prompt_tokens=300, completion_tokens=20),
        Reply(content="The notes say hello.", prompt_tokens=340, completion_tokens=7))
    ran = grapharc(work, fake_openai.base_url, "agent", "what do the notes say?", "--workspace", "ws",
                   "--model", "openai/gpt-4o-mini", "--allow", "read_file", "--trace", "run.jsonl")
    assert ran.returncode == 0, ran.stderr

    calls = [event for event in read_events(work / "run.jsonl") if event["phase"] == "model"]
    assert [(e["model"], e["input_tokens"], e["output_tokens"]) for e in calls] == \
        [("openai/gpt-4o-mini", 300, 20), ("openai/gpt-4o-mini", 340, 7)]

    priced = grapharc(work, fake_openai.base_url, "cost", "run.jsonl", "--rate-card", "rates.toml", "--json")
    assert priced.returncode == 0, priced.stderr
    document = json.loads(priced.stdout)
    expected = (640 * 0.15 + 27 * 0.6) / 1e6  # the model's split rates, not the $100 default
    assert document["total"]["estimated_cost_usd"] == pytest.approx(expected)
    assert document["total"]["unpriced_tokens"] == 0
    assert document["models"] == [{"model": "openai/gpt-4o-mini", "calls": 2, "tokens": 667,
                                   "estimated_cost_usd": pytest.approx(expected), "unpriced_tokens": 0}]


class State(GraphARCState):
    replies: tuple[str, ...] = ()


def test_a_node_calling_two_models_is_priced_per_model_and_the_unpriced_one_is_named(fake_openai, tmp_path):
    wire = get_model("openai/gpt-4o-mini", base_url=fake_openai.base_url, api_key="k")
    local = get_model("ollama/llama3.1", base_url=fake_openai.base_url)
    fake_openai.script(Reply(prompt_tokens=1000, completion_tokens=200),
                       Reply(prompt_tokens=4000, completion_tokens=1000))

    def ask(state: State) -> dict:
        return {"replies": (str(wire.invoke("q").content), str(local.invoke("q").content))}

    trace = tmp_path / "trace.jsonl"
    graph = GraphARC(State, name="two", trace=trace)
    graph.add_node("ask", ask, writes={"replies"})
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    graph.compile().invoke({})

    end = next(event for event in read_events(trace) if event["phase"] == "end")
    assert end["models"] == {
        "openai/gpt-4o-mini": {"calls": 1, "tokens": 1200, "input_tokens": 1000, "output_tokens": 200},
        "ollama/llama3.1": {"calls": 1, "tokens": 5000, "input_tokens": 4000, "output_tokens": 1000}}
    card = RateCard(models={"openai/gpt-4o-mini": Rate(input_per_million=0.15, output_per_million=0.6)})
    document = cost(trace, rate_card=card).to_document()
    assert document["total"]["estimated_cost_usd"] == pytest.approx((1000 * 0.15 + 200 * 0.6) / 1e6)
    assert document["total"]["unpriced_tokens"] == 5000
    unpriced = [(line["model"], line["calls"], line["unpriced_tokens"]) for line in document["models"]
                if line["unpriced_tokens"]]
    assert unpriced == [("ollama/llama3.1", 1, 5000)]
