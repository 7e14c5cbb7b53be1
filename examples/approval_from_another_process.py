"""A session that pauses on an approval, approved by a second process, and carried to the end.

A scripted agent runs as a durable session in a sessions folder: it may read freely but must
ask before ``write_file``, so the thread pauses on an approval record and this process lets
go of it (nothing runs while it waits). A second process, ``grapharc session approve``,
rebuilds the same agent from the settings stored with the thread, approves, and carries the
thread on to its answer. This process then reads the outcome back from the store.

Run it from the repository root after ``make install`` (needs grapharc-tools; the second
process is the ``grapharc`` next to this Python):

    .venv/bin/python examples/approval_from_another_process.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from grapharc.harness.sessions import start_agent_session
from grapharc.harness.setup import AgentSettings
from grapharc.session.manager import SessionManager

THREAD = "approval-example"
SCRIPT: list[Any] = [
    {"tool_calls": [{"name": "read_file", "args": {"path": "draft.txt"}}]},
    {"tool_calls": [{"name": "write_file", "args": {"path": "release.txt", "content": "v1.2 ships\n"}}]},
    "Wrote release.txt from the draft.",
]


def start(sessions: Path, workspace: Path) -> str:
    """Run the agent's first turn as a session; it stops on the approval for ``write_file``,
    whose id is returned."""
    settings = AgentSettings(task="publish the draft as release.txt", workspace=str(workspace),
                             model="mock/approval-example", allow=("read_file",), ask=("write_file",),
                             model_options={"responses": SCRIPT, "follow_conversation": True})
    manager = SessionManager(sessions)
    try:
        session = start_agent_session(manager, settings, trace=sessions / "agent.jsonl", thread_id=THREAD)
        (hold,) = session.holds
        print(f"first process: thread {THREAD} is {session.status}, waiting on {hold.approval_id}")
        print(f"  question: {hold.question}")
        return hold.approval_id
    finally:
        manager.close()


def approve_elsewhere(sessions: Path) -> dict[str, Any]:
    """``grapharc session approve`` in a process of its own; its JSON result."""
    grapharc = Path(sys.executable).with_name("grapharc")
    done = subprocess.run([str(grapharc), "session", "approve", THREAD, "--sessions", str(sessions),
                           "--decider", "alice", "--json"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"grapharc session approve failed ({done.returncode}): {done.stdout}{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main(folder: Path) -> None:
    """Start, pause, approve from another process, then read where the thread ended."""
    workspace, sessions = folder / "workspace", folder / "sessions"
    workspace.mkdir()
    (workspace / "draft.txt").write_text("v1.2 ships\n")
    approval_id = start(sessions, workspace)
    print("release.txt before the approval:", (workspace / "release.txt").exists())
    answer = approve_elsewhere(sessions)
    print(f"second process: approved by alice, answer: {answer.get('answer')!r}")
    manager = SessionManager(sessions)
    try:
        decided = manager.approval(approval_id)
        print(f"first process again: thread {THREAD} is {manager.get(THREAD).status}, "
              f"{approval_id} {decided.state} by {decided.decided_by}")
    finally:
        manager.close()
    print("release.txt after the approval:", (workspace / "release.txt").read_text().strip())


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="grapharc-approval-example-") as scratch:
        main(Path(scratch))
