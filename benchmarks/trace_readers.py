"""Trace readers at scale: ``metrics``, ``cost``, ``viz``, ``replay`` and ``diff`` on 10k / 100k / 1M events.

Each size gets a synthetic trace of realistic mixed events written by GraphARC's own trace
writer (synthetic_trace.py: several interleaved runs, node start/end pairs with deltas, fan-out
supersteps, failures, agent sub-steps inside nodes, admission decisions and planning rounds
outside them). Every command runs in a fresh subprocess (the CLI's own error handling and exit
status), once with orjson and once with orjson blocked (the stdlib ``json`` fallback), and is
reported as median wall time, events per second, peak RSS (the child's own ``VmHWM``, read
inside it at exit) and the ratio to a bare ``for line in f: json.loads(line)`` pass over the
same file, measured in the same run. Every run is checked before anything is printed: its exit
status, and that its JSON answer counts what was written (node executions, failures, tokens,
steps; the bare pass its lines); a run that fails a check ends the script with exit status 1
and no figures. Targets on 1M events: metrics, cost, viz and replay at most 2x the bare pass and
under 100 MB peak RSS. ``replay --reducer append`` folds every worker's evidence into one list,
so its memory is that (growing) state itself and is shown apart from the target row.

    .venv/bin/python benchmarks/trace_readers.py [--sizes 10000,100000,1000000] [--repeat 3] [--json]
    .venv/bin/python benchmarks/trace_readers.py --quick   (2,000 events, orjson, one run each)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _arguments import Count, Counts, benchmark_parser
from _checked import WorkFailed, checked_main, expect, expect_equal, expect_exit
from synthetic_trace import RUNS, Written, synthesise

PEAK = (  # first in every child: at exit, its own peak RSS (VmHWM) into the file named by argv[1]
    "import atexit, sys\n"
    "def _peak(path=sys.argv.pop(1)):\n"
    "    with open('/proc/self/status') as status:\n"
    "        kib = next(line.split()[1] for line in status if line.startswith('VmHWM:'))\n"
    "    with open(path, 'w') as out:\n"
    "        out.write(kib)\n"
    "atexit.register(_peak)\n"
)
BARE = PEAK + (
    "import json\n"
    "with open(sys.argv[1]) as f:\n"
    "    for lines, line in enumerate(f, 1):\n"
    "        json.loads(line)\n"
    "print(lines)\n"
)
COMMAND = PEAK + (
    "if sys.argv[1] == 'stdlib':\n"
    "    sys.modules['orjson'] = None\n"
    "import typer\n"
    "from grapharc.cli.main import run\n"
    "from grapharc.cli.observe_commands import add_observe_commands\n"
    "app = typer.Typer()\n"
    "add_observe_commands(app)\n"
    "sys.exit(run(sys.argv[2:], app=app))\n"
)
CHILD_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
"""The children's environment: bytecode caches written (by the warming run) and read, as an installed
package has them; otherwise every timed start-up would include compiling GraphARC's modules."""
BASELINE = "bare json.loads pass"
TARGETS = ("metrics", "cost", "viz", "replay")
Check = Callable[[str], None]


@dataclass(frozen=True)
class Job:
    """One timed command: its name, its code and arguments (run as ``python -c CODE PEAK_FILE
    ARGS``), the check of what it printed and the exit statuses that mean it did its job."""

    command: str
    decoder: str
    code: str
    args: list[str]
    check: Check
    allowed: tuple[int, ...] = (0,)

    @property
    def name(self) -> str:
        return f"{self.command} ({self.decoder})"


def measure(job: Job, workdir: Path) -> tuple[float, float]:
    """(wall seconds, the child's own peak RSS in MB) of ``job`` in a fresh child process, once
    its exit status and its output are checked. The peak is read inside the child (VmHWM): the
    ``ru_maxrss`` a parent gets back also counts the pages the child shared before its exec."""
    peak, out, err = (workdir / name for name in ("peak", "stdout", "stderr"))
    peak.unlink(missing_ok=True)
    argv = [sys.executable, "-c", job.code, str(peak), *job.args]
    with out.open("wb") as stdout, err.open("wb") as stderr:
        started = time.perf_counter()
        status = subprocess.run(argv, stdout=stdout, stderr=stderr, env=CHILD_ENV, check=False).returncode
        wall = time.perf_counter() - started
    expect_exit([job.name], status, err.read_text(errors="replace"), job.allowed)
    job.check(out.read_text())
    expect(peak.exists(), f"{job.name}: the child recorded no peak RSS")
    return wall, int(peak.read_text()) / 1024.0


def answer(text: str, what: str) -> dict[str, Any]:
    """The JSON document a command printed, which must say ``ok``."""
    try:
        document = json.loads(text)
    except ValueError:
        raise WorkFailed(f"{what} printed no JSON document: {text[:200]!r}") from None
    expect(isinstance(document, dict) and document.get("ok") is True, f"{what} answered {text[:300]}")
    return dict(document)


def commands(path: Path, runs: dict[str, Written]) -> dict[str, tuple[list[str], Check, tuple[int, ...]]]:
    """The trace commands timed, as CLI arguments (JSON output), each with the check that its
    answer counts what ``synthesise`` wrote, and the exit statuses of a job done (``diff`` of two
    different runs answers 1: they differ)."""
    trace = str(path)
    (run_id, one), (other, two) = list(runs.items())[:2]

    def counted(what: str, found: Any, wanted: Any) -> Check:
        return lambda text: expect_equal(found(answer(text, what)), wanted, f"{what} counted")

    metrics = counted("metrics", lambda d: (d["node_executions"], d["completed"], d["failed"],
                                            d["tokens"]["total"]),
                      (one.executions, one.completed, one.failed, one.tokens))
    replay = counted("replay", lambda d: (d["steps_total"], d["failures"]), (one.executions, one.failed))
    return {
        "metrics": (["metrics", trace, run_id, "--json"], metrics, (0,)),
        "cost": (["cost", trace, run_id, "--json"],
                 counted("cost", lambda d: d["total"]["tokens"], one.tokens), (0,)),
        "viz": (["viz", trace, run_id, "--json"],
                counted("viz", lambda d: sum(n["executions"] for n in d["nodes"]), one.executions), (0,)),
        "replay": (["replay", trace, run_id, "--json"], replay, (0,)),
        "replay --reducer append": (["replay", trace, run_id, "--reducer", "evidence=append", "--json"],
                                    counted("replay --reducer", lambda d: (d["steps_total"], d["reducers"]),
                                            (one.executions, ["evidence"])), (0,)),
        "metrics (all runs)": (["metrics", trace, "--json"],
                               counted("metrics (all runs)", lambda d: (d["total"]["runs"],
                                                                        d["total"]["node_executions"]),
                                       (len(runs), sum(w.executions for w in runs.values()))), (0,)),
        "diff": (["diff", trace, run_id, other, "--json"],
                 counted("diff", lambda d: (d["identical"], d["node_path"]["length"]),
                         (False, {"a": one.executions, "b": two.executions})), (1,)),
    }


def jobs(path: Path, events: int, runs: dict[str, Written], decoders: tuple[str, ...]) -> list[Job]:
    """The bare pass and every command with each of ``decoders``."""
    bare = Job(BASELINE, "stdlib", BARE, [str(path)], lambda text: expect_equal(text.strip(), str(events),
                                                                        "lines the bare pass read"))
    return [bare, *(Job(name, backend, COMMAND, [backend, *args], check, allowed)
                    for name, (args, check, allowed) in commands(path, runs).items()
                    for backend in decoders)]


def bench_size(events: int, repeat: int, workdir: Path, quick: bool) -> list[dict[str, object]]:
    """Every job's row at one trace size: median wall time, its ratio to the bare pass, peak RSS.
    ``quick``: orjson only, and no warming run."""
    path = workdir / f"trace-{events}.jsonl"
    timed = jobs(path, events, synthesise(path, events), ("orjson",) if quick else ("orjson", "stdlib"))
    for job in [] if quick else timed:  # warm the page cache and the bytecode cache
        measure(job, workdir)
    samples: dict[str, list[tuple[float, float]]] = {job.name: [] for job in timed}
    for _ in range(repeat):
        for job in timed:
            samples[job.name].append(measure(job, workdir))
    bare = statistics.median(wall for wall, _ in samples[timed[0].name])
    rows = []
    for job in timed:
        values = samples[job.name]
        wall = statistics.median(w for w, _ in values)
        rows.append({"events": events, "command": job.command, "decoder": job.decoder,
                     "wall_s": round(wall, 3), "ratio_to_bare": round(wall / bare, 2),
                     "events_per_s": round(events / wall), "peak_rss_mb": round(max(r for _, r in values), 1),
                     "bytes": path.stat().st_size})
    path.unlink()
    return rows


def main() -> int:
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=Counts(1, 10_000_000), default="10000,100000,1000000")
    parser.add_argument("--repeat", type=Count(1, 10_000), default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true",
                        help="2,000 events, orjson only, one run each and no warming run")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.repeat = [2000], 1
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="grapharc-bench-") as workdir:
        for size in args.sizes:
            rows += bench_size(size, args.repeat, Path(workdir), args.quick)
            if not args.json:
                print(f"... {size} events done", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
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
    return 0


if __name__ == "__main__":
    checked_main(main)
