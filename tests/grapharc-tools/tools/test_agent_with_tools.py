"""The seven tools under AgentNode: what the model is shown of results, stored output and refusals."""

from __future__ import annotations

import json
import sys
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from grapharc.harness.agent import AgentNode
from grapharc.harness.ledger import digest
from grapharc.harness.overflow import OUTPUT_FOLDER
from grapharc.harness.permissions import PermissionPolicy
from grapharc.testing import ScriptedChatModel

DIGITS = [sys.executable, "-c", "print(''.join(str(i % 10) for i in range(3000)))"]


def reply(name: str, args: dict[str, Any], index: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"c{index}"}])


def test_a_scripted_agent_writes_runs_reads_stored_output_and_is_refused_outside(workspace, tools):
    arguments = tools.get("run_command").arguments({"argv": DIGITS})
    stored = OUTPUT_FOLDER / f"{digest('run_command', arguments)[:16]}.txt"  # where the harness puts it
    script = [reply("write_file", {"path": "notes/a.txt", "content": "hello"}, 1),
              reply("run_command", {"argv": DIGITS}, 2),
              reply("read_file", {"path": str(stored), "offset": 30, "limit": 10}, 3),
              reply("read_file", {"path": "../secret.txt"}, 4),
              reply("run_command", {"argv": "cat ../secret.txt"}, 5),
              "done"]
    agent = AgentNode(ScriptedChatModel(responses=script), tools, workspace=workspace,
                      permissions=PermissionPolicy.from_flags(allow=["*"]), output_limit=500)
    compiled = agent.graph().compile()
    state = compiled.invoke({"task": "look around"})
    compiled.close()
    told = [message.content for message in state["messages"] if isinstance(message, ToolMessage)]
    assert told[0] == "created notes/a.txt (5 characters)"
    assert told[1].startswith('{"exit_code": 0') and f"all of it is in {stored}" in told[1]
    whole = (workspace / stored).read_text()
    assert json.loads(whole)["stdout"].startswith("0123456789" * 300)
    assert told[2] == (f"{whole[30:40]}\n[read_file: showed characters 30 to 40 of {len(whole)}; "
                       "call read_file with offset=40 to read on]")
    assert "WorkspaceEscape" in told[3] and "outside the workspace" in told[3]
    assert "not one string" in told[4] and state["answer"] == "done"
    assert (workspace.parent / "secret.txt").read_text() == "outside the workspace\n"
