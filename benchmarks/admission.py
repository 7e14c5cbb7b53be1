"""Admission of chain proposals of 10 / 100 / 1,000 / 10,000 nodes, as time per node.

Each size is a fresh chain ``__start__ -> n0 -> n1 -> ... -> n{N-1}`` checked by
an ``AdmissionChecker`` with a two-rule edge policy, a node policy and a budget
meter, so all five checks do their full work. Reported per size: the best of
``--runs`` check times (sizes interleaved so drift hits all alike), time per
node, the JSON parse of the same proposal, and plain LangGraph building and
compiling the same chain, measured in this run, as the ratio baseline.

The gate is designed to be O(N + E); the verdict line checks that from 1,000 to
10,000 nodes the check time grows at most 12x (exit status 1 if it does not). Every timed
check must admit its chain with all five checks run over all N nodes, every parse must
read N nodes, and every LangGraph build must compile N nodes; otherwise the script exits 1
and prints no figure. ``--quick`` stops at 1,000 nodes with one run (so no verdict line).

    .venv/bin/python benchmarks/admission.py [--runs N] [--quick] [--json]
"""

from __future__ import annotations

import json
import time

from _arguments import Count, benchmark_parser
from _checked import checked_main, expect, expect_equal

from grapharc.harness.permissions import Decision
from grapharc.planner import (
    AdmissionChecker,
    CostEstimate,
    EdgePolicy,
    EdgeRule,
    NodePolicy,
    NodeRegistry,
    NodeRule,
    NodeSpec,
    parse_proposal,
)
from grapharc.planner.proposal import Subgraph
from grapharc.runtime.budget import Budget, BudgetMeter

SIZES = (10, 100, 1_000, 10_000)
MAX_GROWTH = 12.0
CHECKS = 5
"""The admission checks every verdict must have run: kinds, edges, budget, depth, acyclic."""


def chain_text(size: int) -> str:
    nodes = [{"name": f"n{i}", "kind": "step"} for i in range(size)]
    edges = [{"source": "__start__", "target": "n0"}]
    edges += [{"source": f"n{i}", "target": f"n{i + 1}"} for i in range(size - 1)]
    return json.dumps({"nodes": nodes, "edges": edges})


def checker() -> AdmissionChecker:
    registry = NodeRegistry([NodeSpec(name=kind, factory=lambda spec: lambda state: {},
                                      worst_case=CostEstimate(tokens=10))
                             for kind in ("step", "deploy")]).freeze()
    edges = EdgePolicy(rules=(EdgeRule(action=Decision.DENY, target="deploy"),
                              EdgeRule(action=Decision.ALLOW)))
    nodes = NodePolicy(rules=(NodeRule(action=Decision.ALLOW),))
    return AdmissionChecker(registry, edges, node_policy=nodes)


def checked_verdict(gate: AdmissionChecker, proposal: Subgraph, size: int) -> float:
    """Seconds one admission check of the ``size``-node chain took, once its verdict is checked."""
    meter = BudgetMeter(Budget(max_tokens=10**12))
    started = time.perf_counter()
    verdict = gate.check(proposal, meter=meter)
    seconds = time.perf_counter() - started
    expect(verdict.admitted, f"the {size}-node chain was not admitted: {verdict.codes()}")
    expect_equal((verdict.node_count, len(verdict.checks_run)), (size, CHECKS), f"the {size}-node check")
    return seconds


def checked_parse(text: str, size: int) -> float:
    """Seconds one parse of the ``size``-node chain took, once its node count is checked."""
    started = time.perf_counter()
    proposal = parse_proposal(text)
    seconds = time.perf_counter() - started
    expect_equal(len(proposal.nodes), size, f"nodes parsed from the {size}-node chain")
    return seconds


def langgraph_chain(size: int) -> float:
    """Seconds for plain LangGraph to build and compile the same chain (the baseline)."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class State(TypedDict):
        x: int

    started = time.perf_counter()
    graph = StateGraph(State)
    for i in range(size):
        graph.add_node(f"n{i}", lambda state: {})
    graph.add_edge(START, "n0")
    for i in range(size - 1):
        graph.add_edge(f"n{i}", f"n{i + 1}")
    graph.add_edge(f"n{size - 1}", END)
    compiled = graph.compile()
    seconds = time.perf_counter() - started
    expect_equal(len(compiled.nodes), size + 1, f"nodes LangGraph compiled for the {size}-node chain")
    return seconds


def measure(runs: int, sizes: tuple[int, ...]) -> dict[int, dict[str, float]]:
    gate = checker()
    texts = {size: chain_text(size) for size in sizes}
    proposals = {size: parse_proposal(text) for size, text in texts.items()}
    results = {size: {"check_s": float("inf"), "parse_s": float("inf")} for size in sizes}
    for _ in range(runs):  # interleave sizes so machine drift hits every size alike
        for size in sizes:
            results[size]["check_s"] = min(results[size]["check_s"],
                                           checked_verdict(gate, proposals[size], size))
            results[size]["parse_s"] = min(results[size]["parse_s"], checked_parse(texts[size], size))
    for size in sizes:
        results[size]["langgraph_s"] = min(langgraph_chain(size) for _ in range(min(runs, 2)))
    return results


def main() -> int:
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Count(1, 10_000), default=15)
    parser.add_argument("--quick", action="store_true", help="up to 1,000 nodes, one run, no verdict")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sizes = SIZES[:-1] if args.quick else SIZES
    results = measure(1 if args.quick else args.runs, sizes)
    growth = results[10_000]["check_s"] / results[1_000]["check_s"] if 10_000 in results else None
    report = {
        "sizes": {str(size): {
            "check_ms": round(row["check_s"] * 1000, 3),
            "check_us_per_node": round(row["check_s"] / size * 1e6, 3),
            "parse_us_per_node": round(row["parse_s"] / size * 1e6, 3),
            "langgraph_build_us_per_node": round(row["langgraph_s"] / size * 1e6, 3),
            "check_vs_langgraph": round(row["check_s"] / row["langgraph_s"], 3),
        } for size, row in results.items()},
        "growth_1000_to_10000": None if growth is None else round(growth, 2),
        "max_growth": MAX_GROWTH,
        "ok": growth is None or growth <= MAX_GROWTH,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{'nodes':>6} {'check':>10} {'check/node':>11} {'parse/node':>11} "
              f"{'langgraph/node':>15} {'check vs langgraph':>19}")
        for size, row in report["sizes"].items():
            print(f"{size:>6} {row['check_ms']:>8.3f}ms {row['check_us_per_node']:>9.2f}us "
                  f"{row['parse_us_per_node']:>9.2f}us {row['langgraph_build_us_per_node']:>13.2f}us "
                  f"{row['check_vs_langgraph']:>18.3f}x")
        if growth is not None:
            verdict = "ok" if report["ok"] else "TOO STEEP"
            print(f"1,000 -> 10,000 nodes: check time grew {growth:.2f}x (limit {MAX_GROWTH:.0f}x): "
                  f"{verdict}")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    checked_main(main)
