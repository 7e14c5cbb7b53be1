"""The async checkpointer benchmark at a tiny size: both savers measured in one run, with the ratio."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[3] / "benchmarks" / "async_checkpoints.py"


def test_the_benchmark_measures_both_savers_and_their_ratio() -> None:
    done = subprocess.run([sys.executable, str(BENCHMARK), "--threads", "3", "--runs", "1", "--json"],
                          capture_output=True, text=True, timeout=300)

    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["cycles_per_measurement"] == 15
    langgraph, grapharc = report["langgraph_cpu_ms_per_cycle"], report["grapharc_cpu_ms_per_cycle"]
    assert langgraph > 0 and grapharc > 0
    ratio = grapharc / langgraph
    assert abs(report["ratio_grapharc_to_langgraph"] - ratio) <= 0.01 + 0.01 * ratio  # rounded apart
