"""benchmarks/trace_size.py prints our trace's size per 100k node events against GraphARC 0.1.7's from
the same run, and prints nothing when the trace it measures is not the one the workload must write."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmark_runs import Sabotage, assert_refused, run_benchmark
from required import unavailable

ORIGINAL = Path.home() / ".cache" / "grapharc-017" / "bin" / "python"


@pytest.fixture(autouse=True)
def original_installed() -> None:
    """Skip where GraphARC 0.1.7's virtualenv is not installed, or fail where .ci/run installed it."""
    if not ORIGINAL.exists():
        unavailable("GRAPHARC_REQUIRE_ORIGINAL", f"{ORIGINAL} is missing",
                    "GraphARC 0.1.7's virtualenv is not installed")


def test_quick_mode_prints_both_sizes_and_their_ratio() -> None:
    done = run_benchmark("trace_size.py", "--quick")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "GraphARC 0.1.7" in done.stdout and "GraphARC (ours)" in done.stdout
    assert "ours / 0.1.7: " in done.stdout


def test_it_prints_no_figure_when_the_trace_lacks_events() -> None:
    # every node's end event is encoded as nothing: the run succeeds, the trace is short
    sabotage = Sabotage("grapharc.trace.encoding",
                        "_real = encode_event\n"
                        "def encode_event(event, redactor=None):\n"
                        "    return b'' if event.get('phase') == 'end' else _real(event, redactor)\n")
    done = run_benchmark("trace_size.py", "--quick", sabotage=sabotage)
    assert_refused(done, "start, end and error events")
