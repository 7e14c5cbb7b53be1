"""A planted provider key never leaves an agent run in plain text, and its commands cannot read it.

The key is in the agent process's initial environment (as an operator's ``OPENAI_API_KEY``
is), and in a workspace file the agent's tools read. The run is a durable session: an ask on a
write that quotes the key pauses it, another process approves it, and the model's final answer
repeats the key. Afterwards no byte of the key is in the trace, in the checkpoints (the state,
the tool-call ledger, the ask's interrupt), on stdout (``--json``) or on stderr, and the session
store's approvals and audit trail read back hold the redaction marks instead. (The session
store also keeps the agent's settings, which for the scripted model include its script.) A command run by the
agent finds no key in its keeper's (a fork of the agent) nor its agent's ``/proc/PID/environ``,
and may open neither one's ``/proc/PID/mem``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from grapharc.harness.sessions import reopen_agent
from grapharc.session import SessionManager

KEY = "sk-planted-e2b8c41f0a7d4b6c9e13"
MARK = "[redacted:OPENAI_API_KEY]"
PROBE = ("r=$PPID; a=$(awk '{print $4}' /proc/$r/stat); n=0; for p in $r $a; do "
         "c=$(tr '\\0' '\\n' < /proc/$p/environ | grep -c '^OPENAI_API_KEY=.'); n=$((n+c)); done; "
         "echo environ-leaks=$n; for p in $r $a; do "
         "python3 -c 'import sys; open(\"/proc/%s/mem\" % sys.argv[1], \"rb\")' $p 2>/dev/null "
         "&& echo mem=open || echo mem=denied; done")


def call(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "args": args}]}


def grapharc(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": KEY, "GRAPHARC_DEBUG": ""}
    return subprocess.run([sys.executable, "-m", "grapharc.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, check=False, env=env)


def test_a_planted_key_is_in_no_file_or_output_of_the_run_and_no_command_can_read_it(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text(f"the key is {KEY}\n")
    (tmp_path / "script.json").write_text(json.dumps([
        call("run_command", argv=["bash", "-c", PROBE]),
        call("run_command", argv=["cat", "notes.txt"]),
        call("read_file", path="notes.txt"),
        call("write_file", path="out.txt", content=f"copied {KEY}"),
        f"done: the key was {KEY}"]))
    started = grapharc(tmp_path, "agent", "copy the key", "--workspace", "ws", "--model", "mock/a",
                       "--script", "script.json", "--allow", "run_command", "--allow", "read_file",
                       "--ask", "write_file", "--sessions", "sessions", "--thread", "t1", "--json")
    assert started.returncode == 1, started.stderr
    paused = json.loads(started.stdout)
    assert paused["status"] == "paused" and MARK in paused["approvals"][0]["question"]
    finished = grapharc(tmp_path, "session", "approve", "t1", "--dir", "sessions", "--decider", "ana",
                        "--json")
    assert finished.returncode == 0, finished.stderr
    assert json.loads(finished.stdout)["answer"] == f"done: the key was {MARK}"

    for output in (started.stdout, started.stderr, finished.stdout, finished.stderr):
        assert KEY not in output
    stored = [path for path in (tmp_path / "sessions").rglob("*") if path.is_file()
              and not path.name.startswith("sessions.db")]  # it holds the scripted model's own script
    assert {path.name for path in stored} >= {"t1.jsonl", "checkpoints.db"}
    assert [path for path in stored if KEY.encode() in path.read_bytes()] == []

    manager = SessionManager(tmp_path / "sessions")
    try:
        reopen_agent(manager, "t1")
        tool_outputs = [str(m.content) for m in manager.values("t1")["messages"] if m.type == "tool"]
        audit = json.dumps([entry.detail for entry in manager.audit("t1")])
        question = manager.approvals("t1")[0].question
    finally:
        manager.close()
    probe, cat, read = tool_outputs[:3]
    assert "environ-leaks=0" in probe and probe.count("mem=denied") == 2 and MARK not in probe, probe
    assert MARK in cat and MARK in read
    assert MARK in question and MARK in audit and KEY not in audit
