"""Kernel overhead: GraphARC against plain LangGraph, measured in the same run.

Scenarios: linear chains of 50 / 200 / 1000 trivial nodes, a single node looping
1000 times through a conditional edge, and a 100-worker fan-out (LangGraph Send with
a reducer field of bare values, against ``GraphARC.add_fanout``, which also records
each worker's outcome and isolates its failures). GraphARC runs with declared
writes and deep copy on, once with the trace off and once with it on (a JSONL file
in a temporary directory). Each figure is the best of several runs (the one least
disturbed by the rest of the machine), interleaved so drift hits every variant alike;
per-step cost is the run's wall time divided by its node executions. Also: building
and compiling a 1000-node chain.

    .venv/bin/python benchmarks/kernel_overhead.py [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import json
import operator
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from langgraph.graph import END, START
from langgraph.graph import StateGraph as PlainStateGraph
from langgraph.types import Send
from pydantic import BaseModel, Field

from grapharc import GraphARC, GraphARCState
from grapharc.runtime.fanout import WorkerOutcome


class PlainState(BaseModel):
    x: int = 0
    items: list[int] = Field(default_factory=list)
    results: Annotated[list[Any], operator.add] = Field(default_factory=list)


class State(GraphARCState):
    x: int = 0
    items: list[int] = Field(default_factory=list)
    results: Annotated[list[WorkerOutcome], operator.add] = Field(default_factory=list)


def step(state: Any) -> dict[str, int]:
    return {"x": state.x + 1}


def plain_chain(n: int) -> Any:
    graph = PlainStateGraph(PlainState)
    previous = START
    for i in range(n):
        graph.add_node(f"n{i}", step)
        graph.add_edge(previous, f"n{i}")
        previous = f"n{i}"
    graph.add_edge(previous, END)
    return graph.compile()


def grapharc_chain(n: int, trace: Path | None) -> Any:
    graph = GraphARC(State, name=f"chain{n}", trace=trace)
    previous = START
    for i in range(n):
        graph.add_node(f"n{i}", step, writes={"x"})
        graph.add_edge(previous, f"n{i}")
        previous = f"n{i}"
    graph.add_edge(previous, END)
    return graph.compile()


def loop_router(limit: int) -> Callable[[Any], str]:
    def route(state: Any) -> str:
        return "again" if state.x < limit else "done"

    return route


def plain_loop(limit: int) -> Any:
    graph = PlainStateGraph(PlainState)
    graph.add_node("tick", step)
    graph.add_edge(START, "tick")
    graph.add_conditional_edges("tick", loop_router(limit), {"again": "tick", "done": END})
    return graph.compile()


def grapharc_loop(limit: int, trace: Path | None) -> Any:
    graph = GraphARC(State, name="loop", trace=trace)
    graph.add_node("tick", step, writes={"x"})
    graph.add_edge(START, "tick")
    graph.add_conditional_edge("tick", loop_router(limit), {"again": "tick", "done": END})
    return graph.compile()


def plan(state: Any) -> dict[str, list[int]]:
    return {"items": list(range(100))}


def merge(state: Any) -> dict[str, int]:
    return {"x": len(state.results)}


def plain_fanout() -> Any:
    def worker(payload: int) -> dict[str, list[int]]:
        return {"results": [payload * 2]}

    graph = PlainStateGraph(PlainState)
    graph.add_node("plan", plan)
    graph.add_node("work", worker)
    graph.add_node("merge", merge)
    graph.add_edge(START, "plan")
    graph.add_conditional_edges("plan", lambda state: [Send("work", item) for item in state.items], ["work"])
    graph.add_edge("work", "merge")
    graph.add_edge("merge", END)
    return graph.compile()


def grapharc_fanout(trace: Path | None) -> Any:
    graph = GraphARC(State, name="fanout", trace=trace)
    graph.add_node("plan", plan, writes={"items"})
    graph.add_node("merge", merge, writes={"x"})
    graph.add_edge(START, "plan")
    graph.add_fanout(
        "work",
        lambda item: item * 2,
        after="plan",
        over=lambda state: state.items,
        into="results",
        then="merge",
    )
    graph.add_edge("merge", END)
    return graph.compile()


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def compare(variants: dict[str, Callable[[], Any]], runs: int) -> dict[str, float]:
    """Best seconds per variant over ``runs`` interleaved rounds (after one warm-up)."""
    for fn in variants.values():
        fn()
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, fn in variants.items():
            samples[name].append(timed(fn))
    return {name: min(times) for name, times in samples.items()}


def run_scenarios(runs: int, trace_dir: Path) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []

    def record(scenario: str, steps: int, variants: dict[str, Callable[[], Any]]) -> None:
        medians = compare(variants, runs)
        plain = medians["langgraph"]
        for name, seconds in medians.items():
            results.append(
                {
                    "scenario": scenario,
                    "variant": name,
                    "us_per_step": seconds / steps * 1e6,
                    "ratio": seconds / plain,
                }
            )

    for n in (50, 200, 1000):
        config = {"recursion_limit": n + 10}
        graphs = {
            "langgraph": plain_chain(n),
            "grapharc trace off": grapharc_chain(n, None),
            "grapharc trace on": grapharc_chain(n, trace_dir / f"chain{n}.jsonl"),
        }
        record(
            f"chain {n}",
            n,
            {name: (lambda g=g, c=config: g.invoke({"x": 0}, c)) for name, g in graphs.items()},
        )

    limit = 1000
    config = {"recursion_limit": limit + 10}
    graphs = {
        "langgraph": plain_loop(limit),
        "grapharc trace off": grapharc_loop(limit, None),
        "grapharc trace on": grapharc_loop(limit, trace_dir / "loop.jsonl"),
    }
    record(
        f"loop {limit}", limit, {name: (lambda g=g: g.invoke({"x": 0}, config)) for name, g in graphs.items()}
    )

    graphs = {
        "langgraph": plain_fanout(),
        "grapharc trace off": grapharc_fanout(None),
        "grapharc trace on": grapharc_fanout(trace_dir / "fanout.jsonl"),
    }
    record("fan-out 100", 102, {name: (lambda g=g: g.invoke({"x": 0})) for name, g in graphs.items()})

    medians = compare(
        {
            "langgraph": lambda: plain_chain(1000),
            "grapharc": lambda: grapharc_chain(1000, None),
        },
        runs,
    )
    for name, seconds in medians.items():
        results.append(
            {
                "scenario": "build+compile 1000",
                "variant": name,
                "ms": seconds * 1e3,
                "ratio": seconds / medians["langgraph"],
            }
        )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed rounds per scenario")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        results = run_scenarios(args.runs, Path(tmp))
    if args.json:
        print(json.dumps({"runs": args.runs, "results": results}, indent=2))
        return 0
    for row in results:
        cost = f"{row['ms']:9.1f} ms" if "ms" in row else f"{row['us_per_step']:9.1f} us/step"
        print(f"{row['scenario']:20s} {row['variant']:20s} {cost}   {row['ratio']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
