"""CLI start-up: ``grapharc --help`` and ``grapharc plugins`` against ``import langgraph.graph``.

All three are timed in the same run, as fresh processes, and reported as the
median wall time and the ratio to the langgraph import. A CLI that imported
langgraph (or langchain, fastapi, docker) just to print help would sit at or
above 1.0x; the target for ``--help`` is at most 0.25x.

    .venv/bin/python benchmarks/cli_startup.py [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

GRAPHARC = str(Path(sys.executable).parent / "grapharc")

COMMANDS = {
    "import langgraph.graph": [sys.executable, "-c", "import langgraph.graph"],
    "grapharc --help": [GRAPHARC, "--help"],
    "grapharc plugins": [GRAPHARC, "plugins"],
    "python -c pass": [sys.executable, "-c", "pass"],
}


def wall_time(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def measure(runs: int) -> dict[str, float]:
    """Median seconds per command, interleaving the commands so drift hits all alike."""
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for command in COMMANDS.values():
        wall_time(command)  # warm the file cache once
    for _ in range(runs):
        for name, command in COMMANDS.items():
            samples[name].append(wall_time(command))
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    medians = measure(max(1, args.runs))
    baseline = medians["import langgraph.graph"]
    report = {name: {"median_s": round(value, 4), "ratio_to_langgraph": round(value / baseline, 3)}
              for name, value in medians.items()}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{'command':<24} {'median':>9} {'vs import langgraph.graph':>27}")
    for name, row in report.items():
        print(f"{name:<24} {row['median_s'] * 1000:>7.0f}ms {row['ratio_to_langgraph']:>26.3f}x")


if __name__ == "__main__":
    main()
