"""A tool source's ``tool_step()``: entered once around each tools step of an agent, around all of
the step's calls (the MCP source runs its event loop on the step's thread meanwhile)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from langchain_core.messages import AIMessage
from pydantic import BaseModel

from grapharc.decisions.tool_rules import PermissionPolicy
from grapharc.harness.agent import AgentNode
from grapharc.harness.setup import add_source_tools
from grapharc.harness.tools import Tool, ToolRegistry
from grapharc.plugins import ToolSourceInfo, hookimpl
from grapharc.testing import ScriptedChatModel, in_process_source, plugin_host


class NoArgs(BaseModel):
    pass


class RecordingSource:
    """A tool source of one tool, ``things.tick``, recording its calls and its step scope's edges."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self._tool = Tool("things.tick", "tick", NoArgs, lambda workspace: self.seen.append("call") or "ok")

    def tools(self) -> list[Tool]:
        return [self._tool]

    def changed_tools(self) -> list[Tool]:
        return []

    @contextmanager
    def tool_step(self) -> Iterator[None]:
        self.seen.append("enter")
        try:
            yield
        finally:
            self.seen.append("exit")


def steps_of(*calls: int) -> list[AIMessage | str]:
    """A model's replies: one per tools step, asking for that many ticks, then an answer."""
    replies: list[AIMessage | str] = [
        AIMessage(content="", tool_calls=[{"name": "things__tick", "args": {}, "id": f"s{step}c{n}"}
                                          for n in range(count)]) for step, count in enumerate(calls)]
    return [*replies, "done"]


def test_a_sources_tool_step_is_entered_once_around_each_tools_steps_calls(tmp_path: Path):
    source = RecordingSource()

    class Things:
        @staticmethod
        @hookimpl
        def register_tool_sources(register):
            register(ToolSourceInfo(name="things", factory=lambda layers: source))

    tools = ToolRegistry()
    with plugin_host(in_process_source(Things, name="things-source"), installed=False):
        add_source_tools(tools, {"things": {"table": {}, "base": str(tmp_path)}})
    agent = AgentNode(ScriptedChatModel(responses=steps_of(3, 1)), tools, workspace=tmp_path,
                      permissions=PermissionPolicy.from_flags(allow=["*"]))
    compiled = agent.graph().compile()
    try:
        out = compiled.invoke({"task": "t"})
    finally:
        compiled.close()
    assert out["answer"] == "done"
    assert source.seen == ["enter", "call", "call", "call", "exit", "enter", "call", "exit"]
