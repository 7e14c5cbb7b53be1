"""The hostile model: every escape a scripted model can try is refused, on the trace, with 0 violations."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from grapharc.testing.hostile_kit import (
    prepare_arena,
    run_hostile,
    sandbox_attempts,
)
from grapharc.trace import schema as ts


@pytest.fixture(params=["local", "sandboxed"])
def report_and_trace(request, tmp_path):
    trace = tmp_path / "trace.jsonl"
    with prepare_arena(tmp_path / "arena") as arena:
        outside_before = arena.outside.read_text()
        report = run_hostile(arena, request.param, trace)
        assert arena.outside.read_text() == outside_before
        assert not (arena.root / "spawned").exists() and not (arena.root / "shell-escape").exists()
    return report, [json.loads(line) for line in trace.read_text().splitlines()]


def test_governance_violations_are_zero(report_and_trace):
    report, _ = report_and_trace
    assert report.violations == ()
    assert len(report.results) == (26 if report.executor == "sandboxed" else 23)


def test_every_attempt_is_refused_with_an_error_naming_why(report_and_trace):
    report, _ = report_and_trace
    for result in report.results:
        assert result.told.startswith("error: "), result.attempt.label
        assert result.attempt.refusal in result.told, (result.attempt.label, result.told)
        assert result.outcome != "ok", result.attempt.label


def test_every_attempt_is_on_the_trace_with_its_decision_and_what_became_of_it(report_and_trace):
    report, events = report_and_trace
    validator = jsonschema.Draft202012Validator(ts.json_schema())
    assert all(not list(validator.iter_errors(event)) for event in events)
    permissions = {e["call_id"]: e for e in events if e["phase"] == "permission"}
    outcomes = {e["call_id"]: e for e in events if e["phase"] == "tool"}
    for index, result in enumerate(report.results):
        decided = permissions[f"a{index}"]
        assert decided["tool"] == result.attempt.tool
        if decided["decision"] == "deny" or decided.get("approval") == "refused":
            assert f"a{index}" not in outcomes, result.attempt.label  # refused before anything ran
        else:
            assert outcomes[f"a{index}"]["outcome"] in ("error", "refused"), result.attempt.label


def test_asks_were_put_to_the_approver_and_nothing_asked_ran_without_it(report_and_trace):
    report, events = report_and_trace
    asked = [e for e in events if e["phase"] == "permission" and "approval" in e]
    assert [e["tool"] for e in asked] == list(report.asked)
    assert all(e["decision"] == "ask" and e["approval"] == "refused" for e in asked)
    assert report.asked == (("edit_file",) if report.executor == "sandboxed"
                            else ("run_command", "edit_file"))


def test_a_denied_tool_is_never_shown_to_the_hostile_model(report_and_trace):
    report, events = report_and_trace
    assert [r.decision for r in report.results if r.attempt.tool == "grep"] == ["deny"]
    assert not any(e["phase"] == "tool" and e["tool"] == "grep" for e in events)


def test_under_the_local_executor_a_misbehaving_tool_gets_through_and_the_kit_counts_it(tmp_path):
    """The counter is not vacuous: local confines nothing, so a tool that opens a socket or starts
    a process itself is only stopped by the sandbox."""
    with prepare_arena(tmp_path / "arena") as arena:
        misbehaving = [a for a in sandbox_attempts(arena) if a.tool != "plant_pth"]
        report = run_hostile(arena, "local", tmp_path / "trace.jsonl", attempts=misbehaving)
    assert any("connection reached the listener" in v for v in report.violations)
    assert any(v.endswith("spawned changed outside the workspace") for v in report.violations)
    assert any("a subprocess from a sandboxed tool: not refused" in v for v in report.violations)


def test_a_model_that_obeys_planted_instructions_changes_nothing(tmp_path):
    with prepare_arena(tmp_path / "arena") as arena:
        report = run_hostile(arena, "local", tmp_path / "trace.jsonl")
        notes = (arena.workspace / "NOTES.md").read_text()
    assert "IGNORE PREVIOUS INSTRUCTIONS" in notes
    obeyed = [r for r in report.results if r.attempt.label.startswith("obeying planted instructions")]
    assert len(obeyed) == 3 and all(r.outcome != "ok" for r in obeyed)
    assert Path(arena.outside).read_text() == "keep me\n"
