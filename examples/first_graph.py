"""A first GraphARC graph: typed state, declared writes, a budget, and its trace read back.

Shows that each node may write only the fields it declares, that the run is bounded by a
``Budget``, and that every node execution lands in a JSONL trace that a reader streams back.

Run it from the repository root after ``make install``:

    .venv/bin/python examples/first_graph.py [TRACE_FILE]

The trace goes to TRACE_FILE (default: a temporary folder's ``run.jsonl``).
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from grapharc import Budget, GraphARC, GraphARCState
from grapharc.runtime import WritePermissionError
from grapharc.runtime.graph import END, START
from grapharc.trace.reader import read_events


class Ticket(GraphARCState):
    """The graph's state: unknown fields are refused, every write is type-checked."""

    text: str
    label: str = ""
    reply: str = ""


def classify(ticket: Ticket) -> dict[str, str]:
    """Label the ticket (declared to write ``label`` only)."""
    return {"label": "outage" if "down" in ticket.text else "question"}


def respond(ticket: Ticket) -> dict[str, str]:
    """Draft a reply from the label (declared to write ``reply`` only)."""
    return {"reply": f"[{ticket.label}] we are on it"}


def sneaky(ticket: Ticket) -> dict[str, str]:
    """Try to rewrite ``text``, which this node did not declare: the kernel stops it."""
    return {"label": "x", "text": "rewritten"}


def build(trace: Path, second: Callable[[Ticket], dict[str, str]], writes: set[str]) -> GraphARC:
    """``classify`` then ``second`` under a five-iteration budget, tracing to ``trace``."""
    graph = GraphARC(Ticket, name="support", budget=Budget(max_iterations=5), trace=str(trace))
    graph.add_node("classify", classify, writes={"label"})
    graph.add_node(second.__name__, second, writes=writes)
    graph.add_edge(START, "classify")
    graph.add_edge("classify", second.__name__)
    graph.add_edge(second.__name__, END)
    return graph


def main(trace: Path) -> None:
    """Run the graph, show a refused undeclared write, then read the trace back."""
    compiled = build(trace, respond, {"reply"}).compile()
    print("result:", compiled.invoke({"text": "checkout is down"}))
    run = compiled.last_run
    print(f"run: {run.status} after {run.iterations} iterations")
    try:
        build(trace, sneaky, {"label"}).compile().invoke({"text": "hello"})
    except WritePermissionError as error:
        print("refused:", error)
    print(f"trace of run {run.run_id} ({trace.name}):")
    for event in read_events(trace, run_id=run.run_id):
        node = event.get("node") or ""
        print(f"  {event['phase']:<9} {node:<9} {event.get('state_delta') or ''}")


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "run.jsonl"
    main(target)
