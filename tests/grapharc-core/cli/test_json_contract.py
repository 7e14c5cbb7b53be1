"""The --json contract: exactly one document on stdout, saying "ok", never NaN or Infinity."""

from __future__ import annotations

import json

import pytest

from grapharc.testing import plugin_host
from grapharc.testing.cli import run_cli


def strict(text: str) -> dict:
    """One JSON document, parsed as strictly as other languages' parsers would."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("args", [
    ["version"],
    ["session", "list", "--dir", "s"],
    ["session", "prune", "--older-than", "1d", "--dir", "s"],
    ["demo", "approval", "run", "--application", "LN-7310", "--thread", "t1", "--dir", "s"],
])
def test_a_success_document_says_ok(clean_workdir, args):
    with plugin_host():
        result = run_cli([*args, "--json"])
    assert result.exit_code == 0, result.stderr
    assert strict(result.stdout)["ok"] is True


def test_session_status_says_ok_for_a_thread_it_knows(clean_workdir):
    with plugin_host():
        run_cli(["demo", "approval", "run", "--application", "LN-7310", "--thread", "t1", "--dir", "s"])
        document = strict(run_cli(["session", "status", "t1", "--dir", "s", "--json"]).stdout)
    assert document["ok"] is True and document["thread_id"] == "t1"


def test_a_rate_too_large_to_sum_is_refused_not_printed_as_infinity(clean_workdir):
    (clean_workdir / "t.jsonl").write_text('{"phase": "model_call", "run_id": "r", "tokens": 5}\n')
    (clean_workdir / "rates.toml").write_text("[default]\nper_million = 1e308\n")
    with plugin_host():
        result = run_cli(["cost", "t.jsonl", "--rate-card", "rates.toml", "--json"])
    assert result.exit_code == 2
    assert "at most 1e6, got 1e+308" in strict(result.stdout)["error"]["message"]


def test_a_document_with_a_non_finite_number_is_never_written(capsys):
    from grapharc.cli.output import write_json

    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        write_json({"ok": True, "cost": float("inf")})
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("command", [["cost", "t.jsonl"], ["metrics", "t.jsonl"]])
def test_costs_or_durations_that_would_sum_to_infinity_are_a_damaged_line(clean_workdir, command):
    line = '{"phase": "model_call", "run_id": "r", "tokens": 5, "cost_usd": 1e308, "duration_ms": 1e308}\n'
    (clean_workdir / "t.jsonl").write_text(line * 2)
    with plugin_host():
        result = run_cli([*command, "--json"])
    error = strict(result.stdout)["error"]
    assert result.exit_code == 2 and error["code"] == "TraceFormatError"
    assert "t.jsonl:1: is damaged" in error["message"] and "above its maximum" in error["message"]
