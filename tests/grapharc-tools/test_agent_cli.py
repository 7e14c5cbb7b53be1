"""``grapharc agent`` with the seven real tools: a paused session finished by another process."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from grapharc.session import SessionManager


def grapharc(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "grapharc.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=False)


def call(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "args": args}]}


def test_an_ask_pauses_the_process_and_an_approval_in_another_process_finishes_the_same_agent(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("hello\n")
    (tmp_path / "script.json").write_text(json.dumps([
        call("read_file", path="a.txt"), call("write_file", path="b.txt", content="copied"), "copied a.txt"]))
    started = grapharc(tmp_path, "agent", "copy a.txt to b.txt", "--workspace", "ws", "--model", "mock/a",
                       "--script", "script.json", "--sessions", "sessions", "--thread", "t1",
                       "--executor", "sandboxed", "--json")
    assert started.returncode == 1, started.stderr
    paused = json.loads(started.stdout)
    assert paused["status"] == "paused" and "write_file" in paused["approvals"][0]["question"]
    assert not (tmp_path / "ws" / "b.txt").exists()

    approved = grapharc(tmp_path, "session", "approve", "t1", "--dir", "sessions", "--decider", "ana")
    assert approved.returncode == 0, approved.stderr
    assert "answer    : copied a.txt" in approved.stdout
    assert 'tool write_file {"path": "b.txt", "content": "copied"} -> ok' in approved.stderr
    assert (tmp_path / "ws" / "b.txt").read_text() == "copied"
    events = [json.loads(line) for line in (tmp_path / "sessions" / "traces" / "t1.jsonl").read_text()
              .splitlines()]
    writes = [e for e in events if e["phase"] == "tool" and e["tool"] == "write_file"]
    assert [(e["outcome"], e["executor"]) for e in writes] == [("ok", "sandboxed")]

    again = grapharc(tmp_path, "session", "approve", "t1", "--dir", "sessions")
    assert again.returncode == 2 and "not paused" in again.stderr


def test_a_runner_killed_inside_a_command_is_recovered_without_running_the_command_again(tmp_path):
    (tmp_path / "ws").mkdir()
    # the command kills the agent's process: its keeper's parent
    kill = ["sh", "-c", "echo ran >> runs.txt; kill -9 $(awk '{print $4}' /proc/$PPID/stat)"]
    (tmp_path / "script.json").write_text(json.dumps([call("run_command", argv=kill), "done"]))
    started = grapharc(tmp_path, "agent", "run it", "--workspace", "ws", "--model", "mock/a", "--script",
                       "script.json", "--allow", "*", "--sessions", "sessions", "--thread", "t1",
                       "--lease", "1")
    assert started.returncode == -9
    assert (tmp_path / "ws" / "runs.txt").read_text() == "ran\n"
    status = json.loads(grapharc(tmp_path, "session", "status", "t1", "--dir", "sessions", "--json").stdout)
    assert status["status"] == "running"
    # wait for the dead runner's lease to lapse by reading the store here: a status command per
    # poll started a whole CLI process (seconds of CPU each on a busy machine) to read one row
    deadline = time.monotonic() + 30
    sessions = SessionManager(tmp_path / "sessions")
    try:
        while sessions.get("t1").lease_live(time.time()):
            assert time.monotonic() < deadline, "the dead runner's lease never expired"
            time.sleep(0.05)
    finally:
        sessions.close()
    reclaimable = json.loads(grapharc(tmp_path, "session", "status", "t1", "--dir", "sessions",
                                      "--json").stdout)
    assert reclaimable["status"] == "running" and reclaimable["reclaimable"]
    recovered = grapharc(tmp_path, "session", "recover", "t1", "--dir", "sessions", "--json")
    document = json.loads(recovered.stdout)
    assert recovered.returncode == 1 and document["stop_reason"] == "uncertain_side_effect"
    assert (tmp_path / "ws" / "runs.txt").read_text() == "ran\n"  # started, maybe done: not repeated
