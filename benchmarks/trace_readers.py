"""Trace readers at scale: ``metrics``, ``cost``, ``viz``, ``replay`` and ``diff`` on 10k / 100k / 1M events.

Each size gets a synthetic trace of realistic mixed events (several interleaved runs: node
start/end pairs with deltas, fan-out supersteps, failures and retries, agent model calls
outside any node, sub-steps inside nodes, admission decisions and planning rounds). Every
command runs in a fresh subprocess, once with orjson and once with orjson blocked (the
stdlib ``json`` fallback), and is reported as median wall time, events per second, peak
RSS (``ru_maxrss`` of that child, from ``os.wait4``) and the ratio to a bare
``for line in f: json.loads(line)`` pass over the same file, measured in the same run.
Targets on 1M events: metrics, cost, viz and replay at most 2x the bare pass and under
100 MB peak RSS. ``replay --reducer append`` folds every worker's evidence into one list,
so its memory is that (growing) state itself and is shown apart from the target row.
Figures are reported, never asserted.

    .venv/bin/python benchmarks/trace_readers.py [--sizes 10000,100000,1000000] [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

RUNS = 4
CHAIN = ("intake", "collect_context", "investigate", "plan_fix", "verify", "summarize")
WORKERS = 4
BARE = "import json, sys\nwith open(sys.argv[1]) as f:\n    for line in f:\n        json.loads(line)\n"
COMMAND = (
    "import sys\n"
    "if sys.argv[1] == 'stdlib':\n"
    "    sys.modules['orjson'] = None\n"
    "import typer\n"
    "from grapharc.cli.observe_commands import add_observe_commands\n"
    "app = typer.Typer()\n"
    "add_observe_commands(app)\n"
    "app(sys.argv[2:], standalone_mode=False)\n"
)
TARGETS = ("metrics", "cost", "viz", "replay")


def _run_events(rng: random.Random, run_id: str, thread_id: str, tenant: str, ts: list[float]):
    """An endless stream of one run's events (the caller stops it and appends run_end)."""
    base = {"run_id": run_id, "thread_id": thread_id, "attempt": 1, "graph": "incident"}

    def tick() -> float:
        ts[0] += rng.uniform(0.0005, 0.02)
        return ts[0]

    yield {"event": "run_start", **base, "budget": {"max_tokens": 200000, "max_iterations": None},
           "tenant": tenant, "labels": {"team": rng.choice(["sre", "data", "web"])}, "ts": tick()}
    step = 0
    while True:
        step += 1
        if rng.random() < 0.1:
            yield {"event": "round", "phase": "admission", **base, "node": None, "ts": tick(),
                   "delta": {"round_tokens": rng.randint(100, 900), "round_iterations": 6,
                             "round_duration_ms": 812.5}}
            yield {"event": "admission", "phase": "admission", **base, "node": None, "ts": tick(),
                   "status": "admitted", "fingerprint": uuid.UUID(int=rng.getrandbits(128)).hex,
                   "checks": ["kind", "edge", "budget", "depth", "acyclic"], "failed": []}
        if rng.random() < 0.15:
            yield {"event": "model_call", **base, "node": None, "model": "openrouter/some/model",
                   "tokens": rng.randint(50, 2000), "cost_usd": rng.uniform(0.0001, 0.01),
                   "duration_ms": rng.uniform(100, 900), "ts": tick()}
        nodes = ["worker"] * WORKERS if step % 5 == 0 else [CHAIN[step % len(CHAIN)]]
        for node in nodes:
            yield {"event": "start", **base, "node": node, "step": step, "ts": tick()}
        for index, node in enumerate(nodes):
            if rng.random() < 0.2:
                yield {"event": "tool_call", **base, "node": node, "step": step, "tool": "read_file",
                       "duration_ms": rng.uniform(1, 30), "ts": tick()}
            duration = rng.uniform(0.05, 40.0)
            if rng.random() < 0.02:
                yield {"event": "error", **base, "node": node, "step": step, "ts": tick(),
                       "duration_ms": duration,
                       "exception": {"type": "ValueError", "message": "upstream returned 502"}}
                continue
            text = "evidence " * rng.randint(2, 30)
            delta = ({"evidence": [{"source": f"doc-{rng.randint(1, 999)}.md", "chunk": index,
                                    "text": text}]} if node == "worker"
                     else {"notes": text, "round": step})
            yield {"event": "end", **base, "node": node, "step": step, "ts": tick(), "delta": delta,
                   "duration_ms": duration, "tokens": rng.randint(0, 1500),
                   "cost_usd": rng.choice([None, rng.uniform(0.0001, 0.005)])}


def synthesise(path: Path, events: int, seed: int = 7) -> str:
    """Write ``events`` events of ``RUNS`` interleaved runs to ``path``; returns a run id."""
    rng = random.Random(seed)
    ts = [1_790_000_000.0]
    runs = []
    for number in range(RUNS):
        run_id = str(uuid.UUID(int=rng.getrandbits(128)))
        runs.append((run_id, _run_events(rng, run_id, uuid.UUID(int=rng.getrandbits(128)).hex,
                                         f"tenant-{number % 2}", ts)))
    written = 0
    budget = events - RUNS  # room for each run's run_end
    with open(path, "w", encoding="utf-8") as out:
        while written < budget:
            for _run_id, stream in runs:
                for _ in range(rng.randint(1, 12)):
                    if written >= budget:
                        break
                    out.write(json.dumps(next(stream), separators=(",", ":")) + "\n")
                    written += 1
        for run_id, _stream in runs:
            out.write(json.dumps({"event": "run_end", "run_id": run_id, "status": "completed",
                                  "reason": "completed", "ts": ts[0]}, separators=(",", ":")) + "\n")
    return runs[0][0]


def measure(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one fresh child process."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    error = child.stderr.read().decode() if child.stderr else ""
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {child.returncode}: {error}")
    return wall, usage.ru_maxrss / 1024.0


def commands(path: Path, run_id: str, other: str) -> dict[str, list[str]]:
    """The trace commands timed, as CLI arguments (JSON output, to /dev/null)."""
    trace = str(path)
    return {
        "metrics": ["metrics", trace, run_id, "--json"],
        "cost": ["cost", trace, run_id, "--json"],
        "viz": ["viz", trace, run_id, "--json"],
        "replay": ["replay", trace, run_id, "--json"],
        "replay --reducer append": ["replay", trace, run_id, "--reducer", "evidence=append", "--json"],
        "metrics (all runs)": ["metrics", trace, "--json"],
        "diff": ["diff", trace, run_id, other, "--json"],
    }


def bench_size(events: int, repeat: int, workdir: Path) -> list[dict[str, object]]:
    path = workdir / f"trace-{events}.jsonl"
    run_id = synthesise(path, events)
    with open(path, encoding="utf-8") as handle:
        other = next(json.loads(line)["run_id"] for line in handle
                     if json.loads(line)["run_id"] != run_id)
    jobs = {("bare json.loads pass", "stdlib"): [sys.executable, "-c", BARE, str(path)]}
    for name, args in commands(path, run_id, other).items():
        for backend in ("orjson", "stdlib"):
            jobs[(name, backend)] = [sys.executable, "-c", COMMAND, backend, *args]
    for argv in jobs.values():  # warm the page cache and the bytecode cache
        measure(argv)
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {key: [] for key in jobs}
    for _ in range(repeat):
        for key, argv in jobs.items():
            samples[key].append(measure(argv))
    bare = statistics.median(wall for wall, _ in samples[("bare json.loads pass", "stdlib")])
    rows = []
    for (name, backend), values in samples.items():
        wall = statistics.median(w for w, _ in values)
        rows.append({"events": events, "command": name, "decoder": backend, "wall_s": round(wall, 3),
                     "ratio_to_bare": round(wall / bare, 2), "events_per_s": round(events / wall),
                     "peak_rss_mb": round(max(r for _, r in values), 1),
                     "bytes": path.stat().st_size})
    path.unlink()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="grapharc-bench-") as workdir:
        for size in (int(s) for s in args.sizes.split(",")):
            rows += bench_size(size, max(1, args.repeat), Path(workdir))
            if not args.json:
                print(f"... {size} events done", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"python {sys.version.split()[0]}; {RUNS} interleaved runs per trace")
    print(f"{'events':>9} {'command':<24} {'decoder':<7} {'wall s':>8} {'x bare':>7} {'events/s':>11} "
          f"{'peak MB':>8}")
    for row in rows:
        flag = ""
        if row["events"] == 1_000_000 and row["command"] in TARGETS and row["decoder"] == "orjson":
            met = float(row["ratio_to_bare"]) <= 2.0 and float(row["peak_rss_mb"]) < 100.0
            flag = "  target met" if met else "  TARGET MISSED"
        print(f"{row['events']:>9} {row['command']:<24} {row['decoder']:<7} {row['wall_s']:>8.3f} "
              f"{row['ratio_to_bare']:>6.2f}x {row['events_per_s']:>11,} {row['peak_rss_mb']:>8.1f}{flag}")


if __name__ == "__main__":
    main()
