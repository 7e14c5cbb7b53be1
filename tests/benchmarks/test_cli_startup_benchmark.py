"""benchmarks/cli_startup.py gives each command's user CPU time and its ratio apart from the
whole CPU time, whose system part moves with the stack depth the big imports run at."""

from __future__ import annotations

import json

import pytest
from benchmark_runs import run_benchmark

FLOOR = "import langgraph.graph"


def test_quick_mode_reports_user_time_and_its_ratio_beside_cpu_time() -> None:
    done = run_benchmark("cli_startup.py", "--quick", "--original", "none", "--json")

    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    floor_user = report[FLOOR]["user_s"]
    assert floor_user > 0
    for name, row in report.items():  # `python -c pass` may take less user time than the kernel counts
        assert 0 <= row["user_s"] <= row["cpu_s"], name
        assert row["user_ratio_to_langgraph"] == pytest.approx(row["user_s"] / floor_user, abs=0.01), name
