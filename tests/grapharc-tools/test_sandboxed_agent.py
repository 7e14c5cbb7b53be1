"""An AgentNode on the sandboxed executor: its tools run confined, and a refusal is on the trace."""

from __future__ import annotations

import json
import sysconfig
from pathlib import Path

from langchain_core.messages import AIMessage
from pydantic import BaseModel

from grapharc.harness.agent import AgentNode
from grapharc.harness.permissions import PermissionPolicy
from grapharc.harness.tools import SideEffect, Tool, ToolRegistry
from grapharc.testing import ScriptedChatModel
from grapharc.tools import SandboxedExecutor

PLANTED = Path(sysconfig.get_paths()["purelib"], "grapharc_agent_planted.pth")


class WriteArgs(BaseModel):
    path: str
    text: str


def write(workspace: str, path: str, text: str) -> str:
    """A naive write tool that trusts its path: the executor is all that confines it."""
    target = Path(workspace, path)
    target.write_text(text)
    return f"wrote {target}"


WRITE = Tool("write", "write a file", WriteArgs, write, side_effect=SideEffect.WRITE)


def test_an_agents_tool_writes_in_the_workspace_and_a_plant_outside_is_refused_on_the_trace(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    script = [AIMessage(content="", tool_calls=[
        {"name": "write", "args": {"path": "notes.txt", "text": "kept"}, "id": "c1"},
        {"name": "write", "args": {"path": str(PLANTED), "text": "import os"}, "id": "c2"}]), "done"]
    agent = AgentNode(ScriptedChatModel(responses=script), ToolRegistry([WRITE]), workspace=workspace,
                      permissions=PermissionPolicy.from_flags(allow=["*"]), executor=SandboxedExecutor())
    graph = agent.graph()
    graph.trace = tmp_path / "trace.jsonl"
    compiled = graph.compile()
    out = compiled.invoke({"task": "take notes"})
    compiled.close()
    assert out["status"] == "finished"
    assert (workspace / "notes.txt").read_text() == "kept"
    assert not PLANTED.exists()
    tools = [event for event in map(json.loads, (tmp_path / "trace.jsonl").read_text().splitlines())
             if event["phase"] == "tool"]
    assert [event["executor"] for event in tools] == ["sandboxed", "sandboxed"]
    assert tools[0]["outcome"] == "ok"
    refused = tools[1]
    assert refused["outcome"] == "error"
    assert refused["exception"]["type"] == "grapharc.tools.sandbox.errors.SandboxViolation"
    assert str(PLANTED) in refused["exception"]["message"]
