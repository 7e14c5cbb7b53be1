"""The trace commands on traces the kernel itself wrote: a chain, a fan-out, a failure, a resume."""

from __future__ import annotations

import json
import operator
import sqlite3
from typing import Annotated

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from pydantic import Field

from grapharc import GraphARC, GraphARCState
from grapharc.models.scripted import ScriptedChatModel, count_tokens
from grapharc.observe.cost import cost
from grapharc.observe.diff import diff
from grapharc.observe.metrics import metrics
from grapharc.observe.replay import replay
from grapharc.observe.summary import ThreadSummarizer
from grapharc.observe.viz import viz
from grapharc.runtime.graph import END, START


class State(GraphARCState):
    topic: str = ""
    draft: str = ""
    summary: str = ""
    items: list[str] = Field(default_factory=list)
    outcomes: Annotated[list, operator.add] = Field(default_factory=list)
    count: int = 0


def run_ids(path):
    return [json.loads(line)["run_id"] for line in path.read_text().splitlines()
            if json.loads(line)["phase"] == "run_start"]


def chain(trace, calls):
    model = ScriptedChatModel(cost_usd=0.001)

    def draft(state):
        calls.append("draft")
        return {"draft": model.invoke(f"write about {state.topic}").content}

    def summarise(state):
        calls.append("summarise")
        return {"summary": model.invoke(f"summarise: {state.draft}").content}

    g = GraphARC(State, name="writer", trace=trace)
    g.add_node("draft", draft, writes={"draft"})
    g.add_node("summarise", summarise, writes={"summary"})
    g.add_edge(START, "draft").add_edge("draft", "summarise").add_edge("summarise", END)
    return g.compile()


def fan_out(trace):
    models = {word: ScriptedChatModel(responses=[word * n]) for n, word in enumerate("abc", start=1)}

    g = GraphARC(State, name="fan", trace=trace)
    g.add_node("split", lambda s: {"items": ["a", "b", "c"]}, writes={"items"})
    g.add_node("tally", lambda s: {"count": len(s.outcomes)}, writes={"count"})
    g.add_fanout("work", lambda item: models[item].invoke(item * 40).content, after="split",
                 over=lambda s: s.items, into="outcomes", then="tally")
    g.add_edge(START, "split").add_edge("tally", END)
    return g.compile()


def test_a_chain_reads_back_exactly_as_it_ran(tmp_path):
    trace, calls = tmp_path / "t.jsonl", []
    graph = chain(trace, calls)
    first = graph.invoke({"topic": "otters"})
    graph.invoke({"topic": "otters"})
    run_a, run_b = run_ids(trace)
    ran = len(calls)

    seen = metrics(trace, run_a).to_document()
    assert seen["status"] == "completed" and seen["node_executions"] == 2
    assert seen["tokens"]["total"] == seen["meter"]["tokens"] > 0
    assert seen["recorded_cost_usd"] == pytest.approx(seen["meter"]["cost_usd"]) == pytest.approx(0.002)
    assert cost(trace, run_a).to_document()["total"]["tokens"] == seen["tokens"]["total"]

    result = replay(trace, run_a)
    assert result.state == {"draft": first["draft"], "summary": first["summary"]}
    assert len(calls) == ran  # replay called no node (and so no model)

    assert diff(trace, run_a, run_b).identical
    edges = {(e["from"], e["to"]) for e in viz(trace, run_a).to_document()["edges"]}
    assert edges == {("__start__", "draft"), ("draft", "summarise"), ("summarise", "__end__")}


def test_a_fan_out_credits_each_worker_its_own_tokens(tmp_path):
    trace = tmp_path / "t.jsonl"
    final = fan_out(trace).invoke({})
    (run,) = run_ids(trace)

    steps = []
    result = replay(trace, run, reducers={"outcomes": "append"}, on_step=steps.append)
    workers = sorted(step.tokens for step in steps if step.node == "work")
    expected = sorted(count_tokens(word * 40) + count_tokens(word * n)
                      for n, word in enumerate("abc", start=1))
    assert workers == expected  # not each other's concurrent spend
    assert sorted(result.state["outcomes"], key=lambda o: o["index"]) == \
        [o.model_dump(mode="json") for o in sorted(final["outcomes"], key=lambda o: o.index)]
    assert result.state["count"] == final["count"] == 3

    seen = metrics(trace, run).to_document()
    assert seen["nodes"]["work"]["executions"] == 3 and seen["nodes"]["work"]["tokens"] == sum(expected)
    assert seen["tokens"]["total"] == seen["meter"]["tokens"] == sum(expected)
    assert cost(trace, run).to_document()["nodes"]["work"]["tokens"] == sum(expected)
    edges = {(e["from"], e["to"]): e["count"] for e in viz(trace, run).to_document()["edges"]}
    assert edges == {("__start__", "split"): 1, ("split", "work"): 3, ("work", "tally"): 3,
                     ("tally", "__end__"): 1}


def test_a_failing_node_shows_as_a_failure_everywhere(tmp_path):
    trace = tmp_path / "t.jsonl"

    def explode(state):
        raise RuntimeError("disk full")

    g = GraphARC(State, name="fails", trace=trace)
    g.add_node("prepare", lambda s: {"topic": "x"}, writes={"topic"})
    g.add_node("write", explode, writes={"draft"})
    g.add_edge(START, "prepare").add_edge("prepare", "write").add_edge("write", END)
    with pytest.raises(RuntimeError):
        g.compile().invoke({})
    (run,) = run_ids(trace)
    seen = metrics(trace, run).to_document()
    assert seen["status"] == "error" and seen["stop_reason"] == "RuntimeError"
    (failure,) = seen["failures"]
    assert failure["type"] == "RuntimeError" and failure["first_message"] == "disk full"
    steps = []
    replay(trace, run, on_step=steps.append)
    assert [(s.node, s.status) for s in steps] == [("prepare", "ok"), ("write", "error")]
    assert "class n2 failed" in viz(trace, run).mermaid()


def test_a_resumed_thread_summarises_both_attempts(tmp_path):
    trace, flag = tmp_path / "t.jsonl", tmp_path / "fail"
    flag.write_text("once")

    def write(state):
        if flag.exists():
            flag.unlink()
            raise RuntimeError("injected")
        return {"summary": f"{len(state.items)} items"}

    g = GraphARC(State, name="resumable", trace=trace)
    g.add_node("load", lambda s: {"items": ["x", "y"]}, writes={"items"})
    g.add_node("write", write, writes={"summary"})
    g.add_edge(START, "load").add_edge("load", "write").add_edge("write", END)
    saver = SqliteSaver(sqlite3.connect(str(tmp_path / "cp.db"), check_same_thread=False))
    graph = g.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "job-7"}}
    with pytest.raises(RuntimeError):
        graph.invoke({}, config)
    final = graph.invoke(None, config)

    summary = ThreadSummarizer(trace, "job-7").update()
    assert summary.runs == run_ids(trace) and summary.attempts == [1, 2]
    assert summary.status == "completed" and summary.failed == 1
    assert summary.state == {"items": final["items"], "summary": final["summary"]}
    first, second = (metrics(trace, run).to_document() for run in run_ids(trace))
    assert (first["status"], second["status"]) == ("error", "completed")
    assert second["attempts"] == [2]
