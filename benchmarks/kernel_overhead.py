"""Kernel overhead: GraphARC against plain LangGraph, measured in the same run.

Scenarios: linear chains of 50 / 200 / 1000 trivial nodes, a single node looping
1000 times through a conditional edge, and a 100-worker fan-out (LangGraph Send with
a reducer field of bare values, against ``GraphARC.add_fanout``, which also records
each worker's outcome and isolates its failures). GraphARC runs with declared
writes and deep copy on, once with the trace off and once with it on (a JSONL file
in a temporary directory). Each figure is the best of several runs (the one least
disturbed by the rest of the machine), interleaved so drift hits every variant alike;
per-step cost is the run's wall time divided by its node executions. Also: building
and compiling a 1000-node chain. Every run is checked before anything is printed: its final
state (the chain's and the loop's count, every fan-out worker counted and ok), the trace-on
file's one ``end`` per node execution, each build's whole chain; a run that fails a check
ends the script with exit status 1 and no figure.

    .venv/bin/python benchmarks/kernel_overhead.py [--runs N] [--quick] [--json]
"""

from __future__ import annotations

import json
import operator
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from _arguments import Count, benchmark_parser
from _checked import checked_main, expect, expect_equal
from langgraph.graph import END, START
from langgraph.graph import StateGraph as PlainStateGraph
from langgraph.types import Send
from pydantic import BaseModel, Field

from grapharc import GraphARC, GraphARCState
from grapharc.runtime.fanout import WorkerOutcome
from grapharc.trace import read_events

FANOUT = 100
"""Workers in the fan-out scenario."""


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
    return {"items": list(range(FANOUT))}


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


def timed(fn: Callable[[], Any], check: Callable[[Any], None]) -> float:
    """Seconds one call of ``fn`` took, once ``check`` has accepted what it returned."""
    started = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - started
    check(result)
    return seconds


def compare(variants: dict[str, Callable[[], Any]], runs: int, check: Callable[[str, Any], None]
            ) -> dict[str, float]:
    """Best seconds per variant over ``runs`` interleaved rounds (after one warm-up), every
    call's result checked by ``check(variant, result)``."""
    for name, fn in variants.items():
        timed(fn, lambda result, name=name: check(name, result))
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, fn in variants.items():
            samples[name].append(timed(fn, lambda result, name=name: check(name, result)))
    return {name: min(times) for name, times in samples.items()}


def reached(scenario: str, wanted: int) -> Callable[[str, Any], None]:
    """The check of a run that must end with ``x == wanted`` (and, in a fan-out, every worker ok)."""
    def check(variant: str, result: dict[str, Any]) -> None:
        failed = [r for r in result.get("results", []) if getattr(r, "status", "ok") != "ok"]
        expect_equal((result["x"], failed), (wanted, []), f"{scenario}, {variant}: x and failed workers")
    return check


def traced_ends(trace: Path, wanted: int, scenario: str) -> None:
    """The trace-on variant's file holds one ``end`` per node execution of every run."""
    ends = sum(event["phase"] == "end" for event in read_events(trace))
    expect_equal(ends, wanted, f"{scenario}, trace on: node end events in {trace.name}")


def built(variant: str, graph: Any, last: str) -> None:
    """A build+compile made the whole chain, up to its ``last`` node."""
    expect(last in graph.nodes, f"build+compile, {variant}: node {last} missing from the compiled graph")


def run_scenarios(runs: int, trace_dir: Path, quick: bool) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []

    def record(scenario: str, steps: int, final_x: int, graphs: dict[str, Any],
               call: Callable[[Any], Any], trace: Path) -> None:
        """Time ``call`` on each of ``graphs``; every run must end with ``x == final_x``."""
        variants = {name: (lambda g=g: call(g)) for name, g in graphs.items()}
        medians = compare(variants, runs, reached(scenario, final_x))
        traced_ends(trace, (runs + 1) * steps, scenario)
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

    for n in (50,) if quick else (50, 200, 1000):
        config = {"recursion_limit": n + 10}
        trace = trace_dir / f"chain{n}.jsonl"
        graphs = {
            "langgraph": plain_chain(n),
            "grapharc trace off": grapharc_chain(n, None),
            "grapharc trace on": grapharc_chain(n, trace),
        }
        record(f"chain {n}", n, n, graphs, lambda g, c=config: g.invoke({"x": 0}, c), trace)

    limit = 100 if quick else 1000
    config = {"recursion_limit": limit + 10}
    trace = trace_dir / "loop.jsonl"
    graphs = {
        "langgraph": plain_loop(limit),
        "grapharc trace off": grapharc_loop(limit, None),
        "grapharc trace on": grapharc_loop(limit, trace),
    }
    record(f"loop {limit}", limit, limit, graphs, lambda g: g.invoke({"x": 0}, config), trace)

    trace = trace_dir / "fanout.jsonl"
    graphs = {
        "langgraph": plain_fanout(),
        "grapharc trace off": grapharc_fanout(None),
        "grapharc trace on": grapharc_fanout(trace),
    }
    record(f"fan-out {FANOUT}", FANOUT + 2, FANOUT, graphs, lambda g: g.invoke({"x": 0}), trace)

    size = 100 if quick else 1000
    medians = compare(
        {
            "langgraph": lambda: plain_chain(size),
            "grapharc": lambda: grapharc_chain(size, None),
        },
        runs,
        lambda variant, graph: built(variant, graph, f"n{size - 1}"),
    )
    for name, seconds in medians.items():
        results.append(
            {
                "scenario": f"build+compile {size}",
                "variant": name,
                "ms": seconds * 1e3,
                "ratio": seconds / medians["langgraph"],
            }
        )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Count(1, 10_000), default=7, help="timed rounds per scenario")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--quick", action="store_true",
                        help="one round, chain 50, loop 100, fan-out 100, build+compile 100")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs = 1
    with tempfile.TemporaryDirectory() as tmp:
        results = run_scenarios(args.runs, Path(tmp), args.quick)
    if args.json:
        print(json.dumps({"runs": args.runs, "results": results}, indent=2))
        return 0
    for row in results:
        cost = f"{row['ms']:9.1f} ms" if "ms" in row else f"{row['us_per_step']:9.1f} us/step"
        print(f"{row['scenario']:20s} {row['variant']:20s} {cost}   {row['ratio']:.2f}x")
    return 0


if __name__ == "__main__":
    checked_main(main)
