"""benchmarks/sessions.py gives each figure's CPU time beside its wall time (so a noisy machine
does not decide it), counting the interpreters it starts and waits for."""

from __future__ import annotations

import json
import sys

import pytest
from benchmark_runs import BENCHMARKS, run_benchmark

BURN_SECONDS = 0.2
BURN = ("import time\nstarted = time.process_time()\n"
        f"while time.process_time() - started < {BURN_SECONDS}:\n    pass\n")
"""Code that uses at least BURN_SECONDS of its process's CPU time, however busy the machine."""


@pytest.fixture
def sessions(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import sessions as module

    return module


def test_a_call_is_charged_the_cpu_time_it_used_in_this_process(sessions) -> None:
    timing = sessions.clocked(lambda: exec(BURN, {}))

    assert timing.cpu >= BURN_SECONDS, timing


def test_a_call_is_charged_the_cpu_time_of_the_interpreter_it_ran(sessions) -> None:
    timing = sessions.clocked(lambda: sessions.run([sys.executable, "-c", BURN]))

    assert timing.cpu >= BURN_SECONDS, timing


def test_quick_mode_reports_cpu_time_and_its_ratio_beside_each_wall_time() -> None:
    done = run_benchmark("sessions.py", "--quick", "--json")

    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    for name, figures in result["story"].items():
        assert figures["session_cpu"] > 0 and figures["plain_cpu"] > 0, name
        assert figures["cpu_ratio"] == pytest.approx(figures["session_cpu"] / figures["plain_cpu"]), name
    assert result["story"]["resume_in_new_process"]["interpreter_and_imports_cpu"] > 0
    assert set(result["total_cpu_seconds"]) == set(result["total_seconds"])
    assert result["run_cpu_ratio"] == pytest.approx(result["total_cpu_seconds"]["run"]
                                                    / result["total_cpu_seconds"]["plain_run"])
