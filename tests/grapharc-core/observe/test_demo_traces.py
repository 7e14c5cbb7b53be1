"""Every trace command works on the traces the demo stages write (fan-out included)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from grapharc.cli.main import build_app

STAGES = ["stage0", "stage1", "stage2", "stage3", "stage4", "stage5", "stage6", "capstone"]


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """Each stage run once for real, as a separate process: its trace and run id."""
    workdir = tmp_path_factory.mktemp("demos")
    runs = {}
    env = {key: value for key, value in os.environ.items() if key != "GRAPHARC_MODEL"}
    for stage in STAGES:
        trace = workdir / f"{stage}.jsonl"
        extra = ["--worker-timeout", "0.3"] if stage == "stage3" else []
        result = subprocess.run(
            [sys.executable, "-m", "grapharc.cli", "demo", stage, "--json", "--trace", str(trace), *extra],
            capture_output=True, text=True, cwd=workdir, env=env, timeout=180)
        assert result.returncode == 0, result.stderr
        runs[stage] = (trace, json.loads(result.stdout)["run_id"])
    return runs


def grapharc(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(build_app(), [*args, "--json"])
    return result.exit_code, json.loads(result.stdout.splitlines()[-1] if args[0] == "trace"
                                        else result.stdout)


@pytest.mark.parametrize("stage", STAGES)
def test_metrics_cost_viz_and_replay_read_each_demo_trace(demo_runs, stage):
    trace, run_id = demo_runs[stage]
    code, metrics = grapharc("metrics", str(trace), run_id)
    assert code == 0 and metrics["node_executions"] > 0
    code, cost = grapharc("cost", str(trace), run_id)
    assert code == 0 and cost["total"]["tokens"] == metrics["tokens"]["total"]
    code, viz = grapharc("viz", str(trace), run_id)
    assert code == 0 and viz["mermaid"].startswith("flowchart")
    code, replay = grapharc("replay", str(trace), run_id)
    assert code == 0 and replay["steps_total"] == metrics["node_executions"]
    assert replay["state"]


@pytest.mark.parametrize("stage", STAGES)
def test_trace_lists_every_event_of_each_demo_trace(demo_runs, stage):
    trace, _ = demo_runs[stage]
    result = CliRunner().invoke(build_app(), ["trace", str(trace), "--jsonl"])
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.exit_code == 0
    assert len(lines) == len(trace.read_text().splitlines())
    document = json.loads(CliRunner().invoke(build_app(), ["trace", str(trace), "--json"]).stdout)
    assert document["ok"] is True and document["events"] == lines


def test_the_fan_out_demo_trace_replays_both_failures_by_cause(demo_runs):
    trace, run_id = demo_runs["stage3"]
    _, metrics = grapharc("metrics", str(trace), run_id)
    assert metrics["nodes"]["read"]["executions"] == 3
    _, replay = grapharc("replay", str(trace), run_id, "--reducer", "outcomes=append")
    statuses = sorted(outcome["status"] for outcome in replay["state"]["outcomes"])
    assert statuses == ["crashed", "ok", "timed_out"]


def test_two_runs_of_a_deterministic_stage_diff_as_the_same_path_and_state(demo_runs, tmp_path):
    trace, first = demo_runs["stage1"]
    result = subprocess.run([sys.executable, "-m", "grapharc.cli", "demo", "stage1", "--json", "--trace",
                             str(trace)], capture_output=True, text=True, cwd=tmp_path, timeout=180)
    second = json.loads(result.stdout)["run_id"]
    code, diff = grapharc("diff", str(trace), first, second)
    assert diff["node_path"]["same"] and diff["state"]["same"] and diff["tokens"]["same"]
    assert code == 0 and diff["identical"] is True


def test_every_event_of_every_demo_and_of_a_governed_plan_fits_the_published_json_schema(demo_runs, tmp_path):
    import jsonschema

    from grapharc.trace.schema import SCHEMA_FILE

    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text()))
    plan_trace = tmp_path / "plan.jsonl"
    result = CliRunner().invoke(build_app(), ["plan", "investigate the outage", "--trace", str(plan_trace),
                                              "--json"])
    assert result.exit_code == 0, result.stdout
    traces = [trace for trace, _ in demo_runs.values()] + [plan_trace]
    checked = 0
    for trace in traces:
        for number, line in enumerate(trace.read_text().splitlines(), start=1):
            errors = [error.message for error in validator.iter_errors(json.loads(line))]
            assert not errors, f"{trace.name}:{number}: {errors}"
            checked += 1
    phases = {json.loads(line)["phase"] for trace in traces for line in trace.read_text().splitlines()}
    assert {"run_start", "start", "end", "admission", "run_end"} <= phases and checked > 100


def test_metrics_and_replay_say_what_stopped_the_stage1_loop(demo_runs):
    trace, run_id = demo_runs["stage1"]
    _, metrics = grapharc("metrics", str(trace), run_id)
    _, replay = grapharc("replay", str(trace), run_id)
    assert (metrics["status"], metrics["stop_reason"]) == ("completed", "no_progress")
    assert replay["stop_reason"] == "no_progress"


def test_two_stage0_runs_on_different_threads_diff_as_identical(demo_runs, tmp_path):
    trace, first = demo_runs["stage0"]
    result = subprocess.run([sys.executable, "-m", "grapharc.cli", "demo", "stage0", "--json", "--trace",
                             str(trace)], capture_output=True, text=True, cwd=tmp_path, timeout=180)
    second = json.loads(result.stdout)["run_id"]
    code, diff = grapharc("diff", str(trace), first, second)
    assert (code, diff["identical"]) == (0, True), diff
