"""The load benchmark at a tiny size: every event of every run reaches its stream once and in
order, and the figures include the same-run plain LangGraph baseline; with ``--vs langgraph-dev``
the same load runs against LangGraph's server too (a ``peer`` test: .ci/run runs it after the suite;
elsewhere it is skipped where langgraph-cli cannot be installed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "server_load.py"


@pytest.mark.parametrize("workers", [1, 2])
def test_the_benchmark_loses_no_event_and_reports_its_ratio_to_plain_langgraph(workers: int) -> None:
    command = [sys.executable, str(BENCHMARK), "--clients", "2", "--rate", "4", "--duration", "1",
               "--node-seconds", "0.01", "--workers", str(workers), "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)

    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["workers"] == workers
    assert report["runs"] == 4 and report["failed_runs"] == 0 and not report["failures"]
    assert (report["lost"], report["duplicated"], report["out_of_order"]) == (0, 0, 0)
    assert report["events"] == 4 * 6  # per run: the claim, three nodes, the run, its completion
    plain, server = report["plain_langgraph_cpu_ms_per_run"], report["server_cpu_ms_per_run"]
    assert plain > 0 and server > 0
    ratio = report["server_cpu_per_run_ratio_to_plain_langgraph"]
    assert abs(ratio - server / plain) <= 0.05 * ratio + 0.1  # the figures are rounded on their own
    assert report["setup_bound_runs_per_s"] == round(2 / (3 * 0.01), 1)  # 2 clients, each run 3 x 0.01 s
    assert "note: this setup allows" not in done.stderr


def test_the_benchmark_says_when_its_setup_caps_the_rate_below_the_target() -> None:
    command = [sys.executable, str(BENCHMARK), "--clients", "1", "--rate", "4", "--duration", "1",
               "--node-seconds", "0.1", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["setup_bound_runs_per_s"] == 3.3  # one client, 0.3 s per run
    assert "note: this setup allows at most 3.3 runs/s of the 4 asked" in done.stderr


@pytest.mark.peer
def test_the_benchmark_runs_the_same_load_against_langgraph_dev_and_prints_both(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARK.parent))
    from langgraph_dev import LangGraphDevUnavailable, ensure_env

    try:
        ensure_env()  # langgraph-cli from the package registry, in a virtualenv of its own
    except LangGraphDevUnavailable as unavailable:
        if os.environ.get("GRAPHARC_REQUIRE_PEER"):  # set by .ci/run: there the registry is reachable
            pytest.fail(f"GRAPHARC_REQUIRE_PEER is set but langgraph dev cannot be installed: {unavailable}")
        pytest.skip(f"langgraph dev cannot be installed here: {unavailable}")
    command = [sys.executable, str(BENCHMARK), "--vs", "langgraph-dev", "--clients", "2", "--rate", "4",
               "--duration", "1", "--node-seconds", "0.01", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)

    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    for side in ("grapharc serve", "langgraph dev"):
        figures = report[side]
        assert figures["runs"] == 4 and figures["failed_runs"] == 0, figures
        assert figures["server_cpu_ms_per_run"] > 0 and figures["launch_to_healthy_s"] > 0
        assert 0 < figures["cpu_to_healthy_s"] <= figures["cpu_to_ready_s"]
        assert figures["launch_to_healthy_s"] <= figures["launch_to_ready_s"]
        assert 0 < figures["run_latency_p50_ms"] <= figures["run_latency_p99_ms"]
    assert set(report["ratio_ours_to_theirs"]) == {"server_cpu_ms_per_run", "launch_to_healthy_s",
                                                   "cpu_to_healthy_s", "launch_to_ready_s", "cpu_to_ready_s"}


def _figures(cpu_ms: float = 10.0, healthy_s: float = 2.0) -> dict[str, object]:
    return {"runs": 4, "failed_runs": 0, "runs_per_s": 4.0, "server_cpu_ms_per_run": cpu_ms,
            "run_latency_p50_ms": 10.0, "run_latency_p99_ms": 20.0, "launch_to_healthy_s": healthy_s,
            "cpu_to_healthy_s": 1.0, "launch_to_ready_s": 4.0, "cpu_to_ready_s": 2.0,
            "failures": []}


@pytest.fixture
def server_load(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(BENCHMARK.parent))
    import server_load

    return server_load


def test_the_side_by_side_report_gives_ours_over_theirs_for_cpu_and_start_up(server_load) -> None:
    figures = {"grapharc serve": _figures(cpu_ms=15.0, healthy_s=3.0),
               "langgraph dev": _figures(healthy_s=1.5)}
    settings = {"clients": 2, "target_runs_per_s": 4.0}
    text = server_load.side_by_side([figures], settings, as_json=False)
    assert "note:" not in text  # both kept up with the rate asked
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines()[1:-3]}
    assert rows["server_cpu_ms_per_run"] == ["15.0", "10.0", "1.5"]
    assert rows["launch_to_healthy_s"] == ["3.0", "1.5", "2.0"]
    assert rows["cpu_to_healthy_s"] == ["1.0", "1.0", "1.0"]
    assert rows["launch_to_ready_s"] == ["4.0", "4.0", "1.0"]
    assert rows["runs"] == ["4", "4"]  # no ratio for the load's own figures
    document = server_load.side_by_side([figures], settings, as_json=True)
    assert json.loads(document)["ratio_ours_to_theirs"] == {
        "server_cpu_ms_per_run": 1.5, "launch_to_healthy_s": 2.0, "cpu_to_healthy_s": 1.0,
        "launch_to_ready_s": 1.0, "cpu_to_ready_s": 1.0}


def test_rounds_give_each_round_s_cpu_ratio_and_their_median_least_and_greatest(server_load) -> None:
    """Alternating rounds: the table holds each figure's median over the rounds; below it, each
    round's server CPU per run on both and its ratio, then the median, min and max of the ratios."""
    cpu_ms = [(21.5, 18.7), (19.7, 21.2), (30.0, 20.0)]  # ratios 1.15, 0.93, 1.5
    rounds = [{"grapharc serve": _figures(cpu_ms=ours), "langgraph dev": _figures(cpu_ms=theirs)}
              for ours, theirs in cpu_ms]
    settings = {"clients": 2, "target_runs_per_s": 4.0, "rounds": 3}

    document = json.loads(server_load.side_by_side(rounds, settings, as_json=True))
    by_round = document["server_cpu_ms_per_run_by_round"]
    assert [each["ratio"] for each in by_round["rounds"]] == [1.15, 0.93, 1.5]
    assert by_round["rounds"][1] == {"grapharc serve": 19.7, "langgraph dev": 21.2, "ratio": 0.93}
    assert (by_round["median"], by_round["min"], by_round["max"]) == (1.15, 0.93, 1.5)
    assert document["grapharc serve"]["server_cpu_ms_per_run"] == 21.5  # the median of 21.5, 19.7, 30.0
    assert document["langgraph dev"]["server_cpu_ms_per_run"] == 20.0
    assert document["langgraph dev"]["runs"] == 4  # a count stays a count
    ours_by_round = [each["grapharc serve"]["server_cpu_ms_per_run"] for each in document["rounds"]]
    assert ours_by_round == [21.5, 19.7, 30.0]

    text = server_load.side_by_side(rounds, settings, as_json=False).splitlines()
    assert "round 2: server CPU ms per run 19.7 against 21.2 (0.93x)" in text
    assert text[-1] == "server CPU per run, ours / theirs over 3 round(s): median 1.15x, min 0.93x, max 1.5x"


def test_rounds_are_refused_without_a_server_to_alternate_with() -> None:
    done = subprocess.run([sys.executable, str(BENCHMARK), "--rounds", "3", "--json"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "only with --vs langgraph-dev" in json.loads(done.stdout)["error"]


def test_the_report_says_which_server_fell_behind_the_rate_asked(server_load) -> None:
    """A server whose queue backs up spends CPU on runs waiting: its CPU per run is not comparable,
    and the report says so rather than print the ratio alone."""
    behind = {**_figures(), "runs_per_s": 1.08}
    text = server_load.side_by_side([{"grapharc serve": _figures(), "langgraph dev": behind}],
                                    {"clients": 2, "target_runs_per_s": 4.0}, as_json=False)
    notes = [line for line in text.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and notes[0].startswith("note: langgraph dev kept up with 1.08 of the 4.0 runs/s")
