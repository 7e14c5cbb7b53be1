"""Trace size: bytes of trace per 100k node events, GraphARC against GraphARC 0.1.7 in the same run.

The workload, the same on both: one node looping N times through a conditional edge, each
execution writing ``{"x": x + 1}`` (as kernel_overhead.py's loop), traced to a JSONL file; each
side runs in a child process with its own interpreter (0.1.7 lives in a virtualenv of its own,
``--original``). A node event is a ``start``, ``end`` or ``error`` line; the figure is the whole
file's bytes (run-level lines included) per 100,000 of them, and the ratio is ours over 0.1.7's.
Every run is checked before anything is printed: the child's exit status and final ``x``, every
line a JSON object, exactly one ``start`` and one ``end`` per execution, steps 1..N, and our
file read back whole by GraphARC's own trace reader; a failed check ends the script with exit
status 1 and no figures.

    .venv/bin/python benchmarks/trace_size.py [--iterations 5000] [--original PYTHON] [--json]
    .venv/bin/python benchmarks/trace_size.py --quick   (200 iterations)
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from _arguments import Count, ReadableFile, benchmark_parser
from _checked import checked_main, expect, expect_equal, run
from _original import DEFAULT_ORIGINAL

from grapharc.trace import read_events

ORIGINAL = DEFAULT_ORIGINAL / "python"
ORIGINAL_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
"""0.1.7's environment: a PYTHONPATH naming our sources would have it import our ``grapharc``."""
NODE_PHASES = ("start", "end", "error")
PER = 100_000
AIM = 22.0
"""MB per 100k node events: 0.1.7's figure on the issue's workload; ours must not exceed it."""

LOOP = (
    "import sys\n"
    "from langgraph.graph import END, START\n"
    "{setup}\n"
    "limit = int(sys.argv[2])\n"
    "graph = GraphARC(State, name='loop', trace={trace})\n"
    "graph.add_node('tick', lambda state: {{'x': state.x + 1}}, writes={{'x'}})\n"
    "graph.add_edge(START, 'tick')\n"
    "graph.add_conditional_edge('tick', lambda state: 'again' if state.x < limit else 'done',\n"
    "                           {{'again': 'tick', 'done': END}})\n"
    "{run}\n"
)
OURS = LOOP.format(
    setup="from grapharc import GraphARC, GraphARCState\nclass State(GraphARCState):\n    x: int = 0",
    trace="sys.argv[1]",
    run="print(graph.compile().invoke({'x': 0}, {'recursion_limit': limit + 10})['x'])",
)
THEIRS = LOOP.format(
    setup="from pydantic import BaseModel\nfrom grapharc.observe.trace import TraceRecorder\n"
          "from grapharc.runtime.graph import GraphARC\nclass State(BaseModel):\n    x: int = 0",
    trace="TraceRecorder(sys.argv[1])",
    run="print(graph.compile().invoke(State())['x'])",
)


def traced(python: str, code: str, path: Path, iterations: int, env: dict[str, str] | None = None
           ) -> dict[str, Any]:
    """Run the loop in a child of ``python`` (environment ``env``, else this one's) tracing to
    ``path``, check the trace, and say its size."""
    done = run([python, "-c", code, str(path), str(iterations)], env=env)
    expect_equal(done.stdout.strip().splitlines()[-1:], [str(iterations)], f"{python}: the loop's final x")
    events, lines = [], path.read_bytes().splitlines()
    for number, line in enumerate(lines, 1):
        event = json.loads(line)
        expect(isinstance(event, dict) and "phase" in event, f"{path.name}:{number} is not a trace event")
        events.append(event)
    phases = Counter(event["phase"] for event in events)
    expect_equal((phases["start"], phases["end"], phases["error"]), (iterations, iterations, 0),
                 f"{path.name}: start, end and error events")
    steps = [event["step"] for event in events if event["phase"] == "end"]
    expect_equal(steps, list(range(1, iterations + 1)), f"{path.name}: end steps")
    node_events = sum(phases[phase] for phase in NODE_PHASES)
    size = path.stat().st_size
    return {"node_events": node_events, "lines": len(events), "bytes": size,
            "mb_per_100k": round(size / node_events * PER / 1e6, 2),
            "start_line": _mean_line(lines, events, "start"), "end_line": _mean_line(lines, events, "end")}


def _mean_line(lines: list[bytes], events: list[dict[str, Any]], phase: str) -> float:
    """Mean bytes of a ``phase`` line in the file, its newline included."""
    sizes = [len(line) + 1 for line, event in zip(lines, events, strict=True) if event["phase"] == phase]
    return round(sum(sizes) / len(sizes), 1)


def main() -> int:
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=Count(1, 10_000_000), default=5000)
    parser.add_argument("--original", type=ReadableFile(executable=True),
                        help="the Python of a GraphARC 0.1.7 virtualenv (default: .ci/run's)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="200 iterations")
    args = parser.parse_args()
    iterations = 200 if args.quick else args.iterations
    with tempfile.TemporaryDirectory(prefix="grapharc-bench-") as workdir:
        ours_path, theirs_path = Path(workdir) / "ours.jsonl", Path(workdir) / "original.jsonl"
        ours = traced(sys.executable, OURS, ours_path, iterations)
        read_back = sum(1 for _ in read_events(ours_path))
        expect_equal(read_back, ours["lines"], "events GraphARC's reader read back from our trace")
        theirs = traced(str(args.original or ORIGINAL), THEIRS, theirs_path, iterations, ORIGINAL_ENV)
    ratio = round(ours["bytes"] / ours["node_events"] / (theirs["bytes"] / theirs["node_events"]), 3)
    if args.json:
        document = {"iterations": iterations, "ours": ours, "original": theirs, "ratio": ratio}
        print(json.dumps(document, indent=2))
        return 0
    print(f"loop of {iterations} executions; MB per {PER:,} node events (whole file / start+end+error lines)")
    for name, row in (("GraphARC 0.1.7", theirs), ("GraphARC (ours)", ours)):
        print(f"{name:<16} {row['mb_per_100k']:>7.2f} MB  ({row['bytes']:,} bytes, {row['lines']:,} lines; "
              f"mean start line {row['start_line']} B, end line {row['end_line']} B)")
    met = ours["mb_per_100k"] <= AIM and ratio <= 1.0
    print(f"ours / 0.1.7: {ratio:.3f}x  {'aim met' if met else 'AIM MISSED'} (<= {AIM} MB and <= 1.0x)")
    return 0


if __name__ == "__main__":
    checked_main(main)
