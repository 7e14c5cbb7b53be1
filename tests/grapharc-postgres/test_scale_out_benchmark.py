"""The scale-out benchmark at a tiny size: one SQLite worker, then one and two ``grapharc serve``
workers on one PostgreSQL database, every run finished once, none lost, none run twice."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "scale_out.py"


def test_the_benchmark_loses_no_run_and_runs_none_twice_with_one_and_two_workers(postgres_server):
    command = [sys.executable, str(BENCHMARK), "--runs", "4", "--clients", "2", "--workers", "1,2",
               "--admin", postgres_server, "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    setups = [(row["store"], row["workers"]) for row in report["setups"]]
    assert setups == [("sqlite", 1), ("postgres", 1), ("postgres", 2)]
    for row in report["setups"]:
        assert (row["runs"], row["failed"], row["lost"], row["run_twice"]) == (4, 0, 0, 0), row
        assert row["runs_per_s"] > 0 and row["p99_ms"] >= row["p50_ms"] > 0
    assert set(report["ratios"]) == {"postgres x2 / postgres x1", "postgres x1 / sqlite x1"}
    per_run = report["postgres_per_run"]
    assert per_run["transactions"] > 0 and per_run["tables"]["grapharc_audit"]["rows_written"] > 0
    assert not report["failures"]
