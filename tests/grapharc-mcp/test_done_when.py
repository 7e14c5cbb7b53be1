"""Issue 36's story, end to end in separate processes: ``grapharc agent`` with an MCP server's tools
under a policy document pauses on an ask, ``grapharc session approve`` in another process lets it
finish, the side-effecting call made before the pause is not sent again, and the trace shows every
call with its server, while the server's secret never reaches it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp_setup import stdio_entry, toml_entry

GRAPHARC = str(Path(sys.executable).parent / "grapharc")
TOKEN = "notes-secret-0123456789"
SECRET_VARIABLE = "NOTES_API_CODE"
"""Named by the config, not by a secret-looking suffix: redacted because the config names it."""


def grapharc(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, SECRET_VARIABLE: TOKEN}
    return subprocess.run([GRAPHARC, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)


def tool_calls(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "args": args} for name, args in calls]}


def test_an_agent_uses_mcp_tools_under_a_policy_and_an_ask_is_approved_from_another_process(tmp_path):
    (tmp_path / "ws").mkdir()
    notebook = tmp_path / "notebook.txt"
    env = {"NOTES_FILE": str(notebook), "NOTES_TOKEN": "${NOTES_API_CODE}"}
    (tmp_path / "grapharc.toml").write_text(
        toml_entry("notes", stdio_entry("notes", env=env))
        + toml_entry("journal", stdio_entry("notes", env={"NOTES_FILE": str(notebook)})))
    (tmp_path / "policy.toml").write_text(
        'version = "story"\n'
        '[[rules]]\nid = "notes-free"\nresource = "tool"\ntool = "notes.*"\naction = "allow"\n'
        '[[rules]]\nid = "journal-read"\nresource = "tool"\ntool = "journal.*"\naction = "allow"\n'
        '[[rules]]\nid = "journal-ask"\nresource = "tool"\ntool = "journal.add_note"\naction = "ask"\n'
        'reason = "the journal is kept by a person"\n')
    (tmp_path / "script.json").write_text(json.dumps([
        tool_calls(("notes__whoami", {}), ("notes__add_note", {"text": "first"}),
                   ("journal__add_note", {"text": "second"})),
        "noted twice"]))

    started = grapharc(tmp_path, "agent", "keep notes", "--workspace", "ws", "--model", "mock/agent",
                       "--script", "script.json", "--policy", "policy.toml", "--sessions", "sessions",
                       "--thread", "t1", "--json")

    assert started.returncode == 1, started.stderr
    paused = json.loads(started.stdout)
    [approval] = paused["approvals"]
    assert paused["status"] == "paused" and "journal.add_note" in approval["question"]
    assert 'with {"text": "second"}?' in approval["question"]  # about these exact arguments
    assert notebook.read_text() == "first\n"

    decided = grapharc(tmp_path, "session", "approve", "t1", "--dir", "sessions", "--json")

    assert decided.returncode == 0, decided.stderr
    done = json.loads(decided.stdout)
    assert (done["status"], done["answer"]) == ("completed", "noted twice")
    assert notebook.read_text() == "first\nsecond\n"  # "first" was answered from its record, not re-sent
    trace = (tmp_path / "sessions" / "traces" / "t1.jsonl").read_text()
    events = [json.loads(line) for line in trace.splitlines()]
    calls = [(e["attempt"], e["tool"], e["server"], e["executor"], e["outcome"])
             for e in events if e["phase"] == "tool"]
    assert calls == [(1, "notes.whoami", "notes", "mcp", "ok"), (1, "notes.add_note", "notes", "mcp", "ok"),
                     (2, "notes.whoami", "notes", "mcp", "ok"),
                     (2, "notes.add_note", "notes", "mcp", "replayed"),
                     (2, "journal.add_note", "journal", "mcp", "ok")]
    asked = [(e["decision"], e.get("approval")) for e in events
             if e["phase"] == "permission" and e["tool"] == "journal.add_note"]
    assert asked[-1] == ("ask", "approved")
    assert TOKEN not in trace and TOKEN not in decided.stdout and TOKEN not in started.stdout
    assert "[redacted:NOTES_API_CODE]" in json.dumps(done) + trace + started.stdout
