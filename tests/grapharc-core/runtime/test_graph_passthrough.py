"""LangGraph features passed through with the discipline still applied."""

from __future__ import annotations

import json
import operator
from pathlib import Path
from typing import Annotated

import pytest
from langgraph.cache.memory import InMemoryCache
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import CachePolicy, Command, RetryPolicy, interrupt
from pydantic import Field

from grapharc import GraphARC, GraphARCState
from grapharc.runtime.errors import GraphBuildError, WritePermissionError
from grapharc.runtime.graph import END, START


class State(GraphARCState):
    topic: str = ""
    draft: str = ""
    review: str = ""
    log: Annotated[list[str], operator.add] = Field(default_factory=list)


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def single(fn, writes: set[str], trace: Path | None = None, **options):
    g = GraphARC(State, name="one", trace=trace)
    g.add_node("work", fn, writes=writes, **options)
    g.add_edge(START, "work")
    g.add_edge("work", END)
    return g


def test_a_retry_policy_reruns_the_node_and_each_attempt_is_charged_and_traced(
    tmp_path: Path,
) -> None:
    calls: list[int] = []

    def flaky(state: State) -> dict:
        calls.append(1)
        if len(calls) < 3:
            raise ValueError("transient")
        return {"draft": "ok"}

    trace = tmp_path / "t.jsonl"
    policy = RetryPolicy(max_attempts=3, initial_interval=0.001, jitter=False, retry_on=ValueError)
    graph = single(flaky, {"draft"}, trace, retry_policy=policy).compile()

    assert graph.invoke({})["draft"] == "ok"
    node_events = [e["phase"] for e in events(trace) if e.get("node") == "work"]
    assert node_events == ["start", "error", "start", "error", "start", "end"]
    assert events(trace)[-1]["iterations"] == 3


def test_a_retried_node_still_cannot_write_outside_its_allowlist() -> None:
    policy = RetryPolicy(max_attempts=3, initial_interval=0.001, retry_on=ValueError)
    graph = single(lambda s: {"review": "forged"}, {"draft"}, retry_policy=policy).compile()

    with pytest.raises(WritePermissionError):
        graph.invoke({})


def test_a_cache_policy_serves_the_second_run_without_executing_the_node(tmp_path: Path) -> None:
    calls: list[str] = []

    def expensive(state: State) -> dict:
        calls.append(state.topic)
        return {"draft": f"draft on {state.topic}"}

    trace = tmp_path / "t.jsonl"
    graph = single(expensive, {"draft"}, trace, cache_policy=CachePolicy()).compile(cache=InMemoryCache())

    first = graph.invoke({"topic": "x"})
    second = graph.invoke({"topic": "x"})

    assert first["draft"] == second["draft"] == "draft on x"
    assert calls == ["x"]
    assert sum(1 for e in events(trace) if e["phase"] == "start") == 1


def test_durability_is_passed_to_langgraph() -> None:
    def history(durability: str) -> int:
        g = GraphARC(State)
        g.add_node("a", lambda s: {"draft": "a"}, writes={"draft"})
        g.add_node("b", lambda s: {"review": "b"}, writes={"review"})
        g.add_edge(START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", END)
        graph = g.compile(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": durability}}
        graph.invoke({}, config, durability=durability)
        return len(list(graph.get_state_history(config)))

    assert history("exit") < history("sync")


def reviewer_subgraph(trace: Path | None = None, *, forge: bool = False):
    def write_draft(state: State) -> dict:
        return {"draft": f"draft on {state.topic}"}

    def review(state: State) -> dict:
        writes = {"review": f"approved {state.draft}"}
        if forge:
            writes["topic"] = "forged"
        return writes

    sub = GraphARC(State, name="reviewer", trace=trace)
    sub.add_node("write", write_draft, writes={"draft"})
    sub.add_node("review", review, writes={"review", "topic"})
    sub.add_edge(START, "write")
    sub.add_edge("write", "review")
    sub.add_edge("review", END)
    return sub.compile()


def parent_graph(sub, trace: Path | None = None, checkpointer=None):
    g = GraphARC(State, name="parent", trace=trace)
    g.add_node("pick", lambda s: {"topic": "kernels", "log": ["pick"]}, writes={"topic", "log"})
    g.add_node("delegate", sub, writes={"draft", "review"})
    g.add_edge(START, "pick")
    g.add_edge("pick", "delegate")
    g.add_edge("delegate", END)
    return g.compile(checkpointer=checkpointer)


def test_a_compiled_grapharc_used_as_a_node_runs_inside_the_parent_run(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    graph = parent_graph(reviewer_subgraph(), trace)

    result = graph.invoke({})

    assert result["review"] == "approved draft on kernels"
    assert result["log"] == ["pick"]
    node_events = [e for e in events(trace) if e["phase"] == "end"]
    assert [(e["graph"], e["node"]) for e in node_events] == [
        ("parent", "pick"),
        ("reviewer", "write"),
        ("reviewer", "review"),
        ("parent", "delegate"),
    ]
    assert len({e["run_id"] for e in node_events}) == 1
    assert node_events[-1]["state_delta"] == {"draft": "draft on kernels",
                                              "review": "approved draft on kernels"}


def test_a_subgraph_changing_a_field_its_host_did_not_declare_is_refused() -> None:
    graph = parent_graph(reviewer_subgraph(forge=True))

    with pytest.raises(WritePermissionError) as raised:
        graph.invoke({})

    assert (raised.value.node, raised.value.field) == ("delegate", "topic")


def test_a_subgraphs_interrupt_is_resumed_through_the_parent() -> None:
    class Ask(GraphARCState):
        topic: str = ""
        answer: str = ""

    sub = GraphARC(Ask, name="asker")
    sub.add_node("ask", lambda s: {"answer": interrupt(f"about {s.topic}?")}, writes={"answer"})
    sub.add_edge(START, "ask")
    sub.add_edge("ask", END)

    g = GraphARC(Ask, name="host")
    g.add_node("delegate", sub.compile(), writes={"answer"})
    g.add_edge(START, "delegate")
    g.add_edge("delegate", END)
    graph = g.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "s"}}

    paused = graph.invoke({"topic": "x"}, config)
    done = graph.resume("yes", config=config)

    assert paused["__interrupt__"][0].value == "about x?"
    assert done["answer"] == "yes"
    assert graph.get_state(config, subgraphs=True).values["answer"] == "yes"


def test_a_subgraph_command_to_its_parent_is_checked_against_the_hosting_node() -> None:
    class Hop(GraphARCState):
        note: str = ""
        secret: str = ""

    sub = GraphARC(Hop, name="inner")
    sub.add_node(
        "jump", lambda s: Command(graph=Command.PARENT, goto="after", update={"secret": "leak"}), writes=set()
    )
    sub.add_edge(START, "jump")

    g = GraphARC(Hop, name="outer")
    g.add_node("host", sub.compile(), writes={"note"})
    g.add_node("after", lambda s: {"note": "after"}, writes={"note"})
    g.add_edge(START, "host")
    g.add_edge("after", END)

    with pytest.raises(WritePermissionError) as raised:
        g.compile().invoke({})

    assert (raised.value.node, raised.value.field) == ("host", "secret")


def test_a_subgraph_host_may_not_declare_a_reducer_field_it_would_merge_twice() -> None:
    g = GraphARC(State, name="parent")
    g.add_node("delegate", reviewer_subgraph(), writes={"log"})
    g.add_edge(START, "delegate")

    with pytest.raises(GraphBuildError, match="'log', which has a reducer"):
        g.compile()


def test_interrupt_before_pauses_the_run_and_run_end_says_interrupted(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    g = GraphARC(State, name="gated", trace=trace)
    g.add_node("draft", lambda s: {"draft": "d"}, writes={"draft"})
    g.add_node("publish", lambda s: {"review": "published"}, writes={"review"})
    g.add_edge(START, "draft")
    g.add_edge("draft", "publish")
    g.add_edge("publish", END)
    graph = g.compile(checkpointer=InMemorySaver(), interrupt_before=["publish"])
    config = {"configurable": {"thread_id": "gated"}}

    graph.invoke({}, config)
    paused_at = graph.get_state(config).next
    result = graph.invoke(None, config)

    assert paused_at == ("publish",)
    assert result["review"] == "published"
    run_ends = [e for e in events(trace) if e["phase"] == "run_end"]
    assert [(e["attempt"], e["status"]) for e in run_ends] == [(1, "interrupted"), (2, "completed")]
