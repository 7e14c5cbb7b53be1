"""The served benchmarks (server_load.py, scale_out.py) print no figure when the runs under them
fail: every node of the graph they serve raises, in every server process they start. Their quick
runs are test_server_load_benchmark.py's and tests/grapharc-postgres/test_scale_out_benchmark.py's."""

from __future__ import annotations

from benchmark_runs import Sabotage, assert_refused, run_benchmark

RAISING_NODE = Sabotage("bench_graphs", "def step(state):\n    raise RuntimeError('sabotaged')")
"""The served benchmarks' graph (its module written by server_load.py), whose every node raises."""


def test_the_load_benchmark_prints_no_figure_when_its_runs_fail() -> None:
    done = run_benchmark("server_load.py", "--clients", "2", "--rate", "4", "--duration", "1",
                         "--node-seconds", "0.01", sabotage=RAISING_NODE)

    assert_refused(done, "grapharc serve: 4 run(s) failed")


def test_the_scale_out_benchmark_prints_no_figure_when_its_runs_fail(postgres_admin: str) -> None:
    done = run_benchmark("scale_out.py", "--quick", "--workers", "1", "--admin", postgres_admin,
                         sabotage=RAISING_NODE)

    assert_refused(done, "a worker's warm-up run failed")
