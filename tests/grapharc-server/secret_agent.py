"""An agent graph the secrets stream test's server registers (``--registry secret_agent:register``):
a scripted model reads a note that holds the planted key, then answers with the key itself."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from pydantic import BaseModel

from grapharc.decisions.tool_rules import PermissionPolicy
from grapharc.harness.agent import AgentNode
from grapharc.harness.tools import Tool, ToolRegistry
from grapharc.testing import ScriptedChatModel

SECRET_AGENT = "secret-agent"
WORKSPACE_ENV = "SECRET_AGENT_WORKSPACE"


class NoteArgs(BaseModel):
    name: str


def read_note(workspace: str, name: str) -> str:
    return Path(workspace, name).read_text(encoding="utf-8")


def register(manager: Any) -> None:
    """Register the agent over the workspace ``$SECRET_AGENT_WORKSPACE``."""
    key = os.environ["OPENAI_API_KEY"]
    script = [AIMessage(content="", tool_calls=[{"name": "read_note", "args": {"name": "notes.txt"},
                                                 "id": "c1"}]),
              f"the key is {key}"]
    tools = ToolRegistry([Tool("read_note", "read a note", NoteArgs, read_note)])
    agent = AgentNode(ScriptedChatModel(responses=script), tools, workspace=os.environ[WORKSPACE_ENV],
                      permissions=PermissionPolicy.from_flags(allow=["*"]), name=SECRET_AGENT)
    manager.register(agent.graph())
