"""``grapharc demo agent``: the scripted fix, governed call by call, the same on every run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from grapharc.cli.main import build_app
from grapharc.testing import plugin_host


def demo(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "grapharc.cli", "demo", "agent", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def test_the_demo_is_demonstrated_and_prints_the_same_lines_on_every_run(tmp_path):
    first, second = demo(tmp_path), demo(tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    assert "/tmp" not in first.stdout and "result    : demonstrated" in first.stdout
    assert "write_file calc.py" in first.stdout and "deny" in first.stdout
    lines = first.stdout.splitlines()
    story = [line for line in lines if line[:3].strip().rstrip(".").isdigit()]
    assert sum("run_command" in line and "ask -> approved" in line for line in story) == 2


def test_json_is_one_document_with_every_check_and_the_trace_holds_the_decisions(tmp_path):
    done = demo(tmp_path, "--json", "--trace", "t.jsonl")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["ok"] and all(check["ok"] for check in document["checks"])
    assert [(c["tool"], c["decision"], c["approval"]) for c in document["tool_calls"]
            if c["decision"] != "allow"] == [("run_command", "ask", "approved"), ("write_file", "deny", None),
                                             ("run_command", "ask", "approved")]
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert sum(event["phase"] == "permission" for event in events) == 8


def test_without_grapharc_tools_the_demo_says_what_it_needs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with plugin_host(installed=False):
        result = CliRunner().invoke(build_app(), ["demo", "agent"])
    assert result.exit_code == 2
    assert "needs the grapharc-tools plugin" in result.stderr
