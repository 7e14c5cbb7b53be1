"""CLI start-up: ``grapharc --help``, ``grapharc plugins`` and ``grapharc demo stage0`` against
``import langgraph.graph``, ours and (when installed) the original's, in one run.

Every command is timed as a fresh process in a fresh working directory (stage0 starts from no
checkpoint), the commands interleaved, and reported as the median wall time and CPU time (user +
system, steadier than wall time on a loaded machine) with the ratio to the langgraph import of
the same interpreter, and the user CPU time apart with its own ratio. The system part is mostly
page faults and mmap/munmap, and on CPython 3.11 it depends on how deep in the call stack the big
imports run: each thread's frames live in 16 KiB chunks, mapped and unmapped as a loop crosses a
chunk's edge, so the same ``import langgraph.graph`` took about 90 ms more system time (and the
same user time) 15 small frames down than 40 down (17.8k munmaps against 3.9k; 6.6k at the top).
``grapharc demo stage0`` imports LangGraph from inside a command, its floor from the top of
``-c``: the user ratio is not swayed by where each lands. A CLI that imported langgraph just to
print help would sit at or above 1.0x; stage0 imports it, so its floor is 1.0x. GraphARC 0.1.7
(``--original BIN``, the ``bin`` folder of a virtualenv it is installed in; by default
~/.cache/grapharc-017/bin when present) runs its own ``--help`` and stage0 against its own
interpreter's import. Every run must exit 0 and print what its command prints (the usage, the
core plugin, stage0's result), or no figure is printed.

    .venv/bin/python benchmarks/cli_startup.py [--runs N] [--quick] [--json] [--original BIN|none]
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _arguments import Count, FolderOrNone, benchmark_parser
from _checked import checked_main, expect, expect_exit
from _original import original_bin


@dataclass(frozen=True)
class Command:
    """One timed command: its argv, what it must print, and the row it is a ratio to."""

    argv: tuple[str, ...]
    prints: str
    floor: str


def commands(ours: Path, original: Path | None) -> dict[str, Command]:
    """Our commands (and the original's, when given), each against its interpreter's import."""
    table = {
        "import langgraph.graph": Command((str(ours / "python"), "-c", "import langgraph.graph"), "",
                                          "import langgraph.graph"),
        "grapharc --help": Command((str(ours / "grapharc"), "--help"), "Usage: grapharc",
                                   "import langgraph.graph"),
        "grapharc plugins": Command((str(ours / "grapharc"), "plugins"), "grapharc-core",
                                    "import langgraph.graph"),
        "grapharc demo stage0": Command((str(ours / "grapharc"), "demo", "stage0"),
                                        "result    : demonstrated", "import langgraph.graph"),
        "python -c pass": Command((str(ours / "python"), "-c", "pass"), "", "import langgraph.graph"),
    }
    if original is not None:
        floor = "0.1.7: import langgraph.graph"
        table |= {
            floor: Command((str(original / "python"), "-c", "import langgraph.graph"), "", floor),
            "0.1.7: grapharc --help": Command((str(original / "grapharc"), "--help"), "usage: grapharc",
                                              floor),
            "0.1.7: grapharc demo stage0": Command((str(original / "grapharc"), "demo", "stage0"),
                                                   "report_written: True", floor),
        }
    return table


def children_cpu() -> tuple[float, float]:
    """CPU seconds (user + system, and user alone) used so far by this process's finished children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime, usage.ru_utime


def timed(name: str, command: Command) -> tuple[float, float, float]:
    """Wall, CPU and user CPU seconds one run of ``command`` took, in a fresh directory, once checked."""
    with tempfile.TemporaryDirectory(prefix="cli-startup-") as folder:
        (cpu, user), started = children_cpu(), time.perf_counter()
        done = subprocess.run(command.argv, capture_output=True, text=True, check=False, cwd=folder)
        seconds, (cpu_after, user_after) = time.perf_counter() - started, children_cpu()
    expect_exit(command.argv, done.returncode, done.stderr)
    expect(command.prints in done.stdout, f"{name} printed no {command.prints!r}: {done.stdout[:200]!r}")
    return seconds, cpu_after - cpu, user_after - user


def measure(table: dict[str, Command], runs: int, warm: bool) -> dict[str, tuple[float, ...]]:
    """Median wall, CPU and user CPU seconds per command, interleaving the commands so drift hits
    all alike."""
    samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in table}
    for name in table if warm else ():
        timed(name, table[name])  # warm the file cache once
    for _ in range(runs):
        for name, command in table.items():
            samples[name].append(timed(name, command))
    return {name: tuple(map(statistics.median, zip(*values, strict=True)))
            for name, values in samples.items()}


def main() -> int:
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Count(1, 10_000), default=15)
    parser.add_argument("--quick", action="store_true", help="one run of each command, no warming run")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--original", type=FolderOrNone(),
                        help="bin folder of a GraphARC 0.1.7 virtualenv, or none")
    args = parser.parse_args()
    table = commands(Path(sys.executable).parent, original_bin(args.original, "grapharc"))
    medians = measure(table, 1 if args.quick else args.runs, warm=not args.quick)
    report = {name: {"median_s": round(wall, 4), "cpu_s": round(cpu, 4), "user_s": round(user, 4),
                     "ratio_to_langgraph": round(wall / medians[table[name].floor][0], 3),
                     "cpu_ratio_to_langgraph": round(cpu / medians[table[name].floor][1], 3),
                     "user_ratio_to_langgraph": round(user / medians[table[name].floor][2], 3)}
              for name, (wall, cpu, user) in medians.items()}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{'command':<30} {'median':>9} {'ratio':>7} {'cpu':>9} {'cpu ratio':>9} {'user':>9} "
          f"{'user ratio':>10}   (ratio: to import langgraph.graph, same interpreter)")
    for name, row in report.items():
        print(f"{name:<30} {row['median_s'] * 1000:>7.0f}ms {row['ratio_to_langgraph']:>6.3f}x "
              f"{row['cpu_s'] * 1000:>7.0f}ms {row['cpu_ratio_to_langgraph']:>8.3f}x "
              f"{row['user_s'] * 1000:>7.0f}ms {row['user_ratio_to_langgraph']:>9.3f}x")
    return 0


if __name__ == "__main__":
    checked_main(main)
