"""CLI start-up: ``grapharc --help`` and ``grapharc plugins`` against ``import langgraph.graph``.

All three are timed in the same run, as fresh processes, and reported as the
median wall time and the ratio to the langgraph import. A CLI that imported
langgraph (or langchain, fastapi, docker) just to print help would sit at or
above 1.0x; the target for ``--help`` is at most 0.25x. Every run must exit 0 and
print what its command prints (the usage, the core plugin), or no figure is printed.

    .venv/bin/python benchmarks/cli_startup.py [--runs N] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _checked import checked_main, expect, expect_exit

GRAPHARC = str(Path(sys.executable).parent / "grapharc")

COMMANDS = {
    "import langgraph.graph": [sys.executable, "-c", "import langgraph.graph"],
    "grapharc --help": [GRAPHARC, "--help"],
    "grapharc plugins": [GRAPHARC, "plugins"],
    "python -c pass": [sys.executable, "-c", "pass"],
}
PRINTS = {"grapharc --help": "Usage: grapharc", "grapharc plugins": "grapharc-core"}
"""What a run of the command must print to count as done (the others print nothing)."""


def wall_time(name: str) -> float:
    """Seconds one run of command ``name`` took, once its exit status and output are checked."""
    started = time.perf_counter()
    done = subprocess.run(COMMANDS[name], capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    expect_exit(COMMANDS[name], done.returncode, done.stderr)
    wanted = PRINTS.get(name, "")
    expect(wanted in done.stdout, f"{name} printed no {wanted!r}: {done.stdout[:200]!r}")
    return seconds


def measure(runs: int, warm: bool) -> dict[str, float]:
    """Median seconds per command, interleaving the commands so drift hits all alike."""
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for name in COMMANDS if warm else ():
        wall_time(name)  # warm the file cache once
    for _ in range(runs):
        for name in COMMANDS:
            samples[name].append(wall_time(name))
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="one run of each command, no warming run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    medians = measure(1 if args.quick else max(1, args.runs), warm=not args.quick)
    baseline = medians["import langgraph.graph"]
    report = {name: {"median_s": round(value, 4), "ratio_to_langgraph": round(value / baseline, 3)}
              for name, value in medians.items()}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{'command':<24} {'median':>9} {'vs import langgraph.graph':>27}")
    for name, row in report.items():
        print(f"{name:<24} {row['median_s'] * 1000:>7.0f}ms {row['ratio_to_langgraph']:>26.3f}x")
    return 0


if __name__ == "__main__":
    checked_main(main)
