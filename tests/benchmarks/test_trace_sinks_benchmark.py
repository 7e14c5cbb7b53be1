"""benchmarks/trace_sinks.py in its quick mode prints the PostgreSQL trace's append cost and the
delays of a stream following a run on another worker (``grapharc serve``), and prints no figure
when the appends or that run fail."""

from __future__ import annotations

import pytest
from benchmark_runs import Sabotage, assert_refused, run_benchmark


def test_quick_mode_prints_append_costs_and_both_stream_delays(postgres_admin: str) -> None:
    done = run_benchmark("trace_sinks.py", "--quick", "--postgres", postgres_admin)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "append, 200 events: file " in done.stdout and "append_many by 100: file " in done.stdout
    for mode in ("notify", "polling"):
        assert f"stream delay, {mode}: 3 entries, median " in done.stdout, done.stdout


@pytest.mark.parametrize(("sabotage", "naming"), [
    # the PostgreSQL trace store keeps none of the events appended one by one
    (Sabotage("grapharc.postgres.traces", "PostgresTraceSink.write = lambda self, *args, **kwargs: None"),
     "events append left in the PostgresTraceSink"),
    # every node of the chain worker A runs raises: its runs fail
    (Sabotage("bench_graphs", "def step(state):\n    raise RuntimeError('sabotaged')"),
     "worker A's run (RuntimeError: sabotaged): its status"),
], ids=["appends-lost", "runs-fail"])
def test_it_prints_no_figure_when_its_work_fails(postgres_admin: str, sabotage: Sabotage,
                                                 naming: str) -> None:
    done = run_benchmark("trace_sinks.py", "--quick", "--postgres", postgres_admin, sabotage=sabotage)

    assert_refused(done, naming)
