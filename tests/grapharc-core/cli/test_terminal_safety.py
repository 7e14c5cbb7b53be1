"""Data echoed to a terminal (a goal, trace content, model output) cannot move the cursor or fake a line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grapharc.cli.output import terminal_safe, terminal_text

HOSTILE = "x\x1b[2J\rDONE    thread=t approved\nstatus: completed"
SHOWN = "x\\x1b[2J\\rDONE    thread=t approved\\nstatus: completed"


def grapharc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHARC_")}
    return subprocess.run([sys.executable, "-m", "grapharc.cli", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=120)


def assert_inert(text: str) -> None:
    """No escape or carriage return, and no line that the hostile text started on its own."""
    assert "\x1b" not in text and "\r" not in text
    assert not any(line.startswith(("DONE", "status: completed")) for line in text.splitlines())


def test_terminal_text_escapes_what_a_terminal_acts_on_and_keeps_the_rest():
    assert terminal_text(HOSTILE) == SHOWN
    assert terminal_text("tab\tand ünïcode, \u202eevil\x9b\x7f") == "tab\tand ünïcode, \\u202eevil\\x9b\\x7f"


def test_terminal_safe_reaches_keys_and_nested_values_and_leaves_numbers_alone():
    assert terminal_safe({"a\nb": [("\r", 1.5)], "n": None}) == {"a\\nb": [("\\r", 1.5)], "n": None}


def test_a_goal_is_shown_escaped_by_plan_and_kept_verbatim_in_json(tmp_path):
    human = grapharc("plan", HOSTILE, cwd=tmp_path)
    assert human.returncode == 0, human.stderr
    assert_inert(human.stdout)
    assert f"goal      : {SHOWN}\n" in human.stdout
    document = json.loads(grapharc("plan", HOSTILE, "--json", cwd=tmp_path).stdout)
    assert document["goal"] == HOSTILE


@pytest.fixture
def hostile_trace(tmp_path: Path) -> Path:
    """A trace whose node name, written field and error message hold the hostile text."""
    base = {"run_id": "r1", "thread_id": "t", "attempt": 1, "graph": "g"}
    events = [
        {**base, "phase": "run_start", "ts": 1.0, "budget": {}},
        {**base, "phase": "start", "ts": 1.1, "node": HOSTILE, "step": 1},
        {**base, "phase": "end", "ts": 1.2, "node": HOSTILE, "step": 1, "duration_ms": 1.0,
         "tokens": 1, "state_delta": {HOSTILE: HOSTILE}},
        {**base, "phase": "start", "ts": 1.3, "node": "n", "step": 2},
        {**base, "phase": "error", "ts": 1.4, "node": "n", "step": 2, "duration_ms": 1.0,
         "exception": {"type": "ValueError", "message": HOSTILE}},
        {**base, "phase": "run_end", "ts": 1.5, "status": "error", "stop_reason": "ValueError"},
        {**base, "run_id": "r2", "phase": "run_start", "ts": 2.0, "budget": {}},
        {**base, "run_id": "r2", "phase": "run_end", "ts": 2.1, "status": "completed",
         "stop_reason": "completed"},
    ]
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    return path


@pytest.mark.parametrize("command", [["trace"], ["metrics", "r1"], ["replay", "r1"], ["viz", "r1"],
                                     ["cost", "r1"], ["diff", "r1", "r2"]],
                         ids=lambda command: command[0])
def test_trace_content_is_shown_escaped_by_every_trace_command(hostile_trace, command):
    result = grapharc(command[0], str(hostile_trace), *command[1:], cwd=hostile_trace.parent)
    assert result.returncode == (1 if command[0] == "diff" else 0), result.stderr
    assert_inert(result.stdout + result.stderr)
    if command[0] != "viz":
        assert SHOWN in result.stdout


def test_a_hostile_error_message_is_escaped_on_stderr(tmp_path):
    result = grapharc("session", "list", "--status", HOSTILE, cwd=tmp_path)
    assert result.returncode == 2
    assert_inert(result.stderr)
