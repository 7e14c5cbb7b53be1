"""An agent's side effects survive a SIGKILL without repeating, and its asks are durable approvals."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def child(workspace: Path, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(HERE / "agent_child.py"), str(workspace), str(folder), *args],
                          capture_output=True, text=True, timeout=120)


def test_a_write_executed_before_a_sigkill_is_not_repeated_when_the_thread_resumes(tmp_path: Path) -> None:
    workspace, folder = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    folder.mkdir()

    killed = child(workspace, folder, "run", "t1")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert (workspace / "todo.txt").read_text() == "once\n"  # the write happened, the node never ended

    resumed = child(workspace, folder, "resume", "t1")

    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout) == {"status": "finished", "stop_reason": "answered"}
    assert (workspace / "todo.txt").read_text() == "once\n"  # answered from its record, not run again
    events = [json.loads(line) for line in (folder / "trace.jsonl").read_text().splitlines()]
    outcomes = [(e["attempt"], e["tool"], e["outcome"]) for e in events if e["phase"] == "tool"]
    assert outcomes == [(1, "append_note", "ok"), (2, "append_note", "replayed"), (2, "die_once", "ok")]


def test_a_command_the_process_died_inside_is_not_repeated_blindly(tmp_path: Path) -> None:
    workspace, folder = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    folder.mkdir()
    assert child(workspace, folder, "run-midway", "t2").returncode == -signal.SIGKILL

    resumed = child(workspace, folder, "resume-midway", "t2")

    assert json.loads(resumed.stdout) == {"status": "stopped", "stop_reason": "uncertain_side_effect"}
    events = [json.loads(line) for line in (folder / "trace.jsonl").read_text().splitlines()]
    outcomes = [(e["attempt"], e["tool"], e["outcome"]) for e in events if e["phase"] == "tool"]
    assert outcomes == [(1, "append_note", "ok"), (2, "append_note", "replayed"), (2, "die_once", "refused")]
    assert (workspace / "todo.txt").read_text() == "once\n"


def test_an_agents_ask_in_a_session_pauses_and_a_decision_from_another_process_lets_it_run(
        tmp_path: Path) -> None:
    workspace, folder = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()

    started = child(workspace, folder, "session-start", "s1")
    assert started.returncode == 0, started.stderr
    paused = json.loads(started.stdout)
    assert paused["status"] == "paused" and not (workspace / "todo.txt").exists()
    approval = paused["approvals"][0]
    assert "append_note" in approval["question"]

    decided = child(workspace, folder, "session-approve", "s1", approval["approval_id"], "approved")

    assert decided.returncode == 0, decided.stderr
    assert json.loads(decided.stdout)["status"] == "completed"
    assert (workspace / "todo.txt").read_text() == "approved\n"
