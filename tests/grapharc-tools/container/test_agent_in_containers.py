"""An agent whose executor is chosen by name, ``container``: each of its tool calls is a container."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from container_images import IMAGE
from container_tools import DIE, NOTE
from fake_docker import FakeDockerEngine
from langchain_core.messages import AIMessage

from grapharc.harness.agent import AgentNode
from grapharc.harness.permissions import PermissionPolicy
from grapharc.harness.setup import open_executor
from grapharc.harness.tools import ToolRegistry
from grapharc.testing import ScriptedChatModel


def reply(name: str, args: dict[str, Any], index: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"c{index}"}])


def test_an_agents_tool_calls_each_run_in_a_container_of_the_named_image(
        engine: FakeDockerEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", engine.base_url)
    monkeypatch.setenv("GRAPHARC_CONTAINER_IMAGE", IMAGE)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    model = ScriptedChatModel(responses=[reply("write_note", {"name": "todo.txt", "text": "milk"}, 1),
                                         reply("die", {"code": 9}, 2), "noted"])
    agent = AgentNode(model, ToolRegistry([NOTE, DIE]), workspace=workspace,
                      permissions=PermissionPolicy.from_flags(allow=["*"]),
                      executor=open_executor("container"))
    graph = agent.graph()
    graph.trace = tmp_path / "trace.jsonl"
    compiled = graph.compile()
    out = compiled.invoke({"task": "keep notes"})
    compiled.close()

    assert (out["status"], out["answer"]) == ("finished", "noted")
    assert (workspace / "todo.txt").read_text() == "milk"
    events = [json.loads(line) for line in graph.trace.read_text().splitlines()]
    tools = [event for event in events if event["phase"] == "tool"]
    assert [(e["tool"], e["outcome"], e["executor"]) for e in tools] == [
        ("write_note", "ok", "container"), ("die", "error", "container")]
    specs = [request.body for request in engine.calls("POST", r"/containers/create")]
    assert [spec["Labels"]["grapharc.tool"] for spec in specs] == ["write_note", "die"]
    assert all(spec["Image"] == IMAGE and spec["HostConfig"]["NetworkMode"] == "none" for spec in specs)
    assert engine.containers == {} and len(engine.removed) == 2


def test_a_missing_image_stops_the_run_instead_of_reaching_the_model_as_a_tool_error(
        engine: FakeDockerEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from grapharc.harness.executors import ExecutorUnavailableError

    monkeypatch.setenv("DOCKER_HOST", engine.base_url)
    monkeypatch.setenv("GRAPHARC_CONTAINER_IMAGE", "not-pulled:latest")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    model = ScriptedChatModel(responses=[reply("write_note", {"name": "todo.txt", "text": "milk"}, 1),
                                         "noted"])
    agent = AgentNode(model, ToolRegistry([NOTE]), workspace=workspace,
                      permissions=PermissionPolicy.from_flags(allow=["*"]),
                      executor=open_executor("container"))
    compiled = agent.graph().compile()
    with pytest.raises(ExecutorUnavailableError, match="not-pulled:latest"):
        compiled.invoke({"task": "keep notes"})
    compiled.close()
    assert not (workspace / "todo.txt").exists()
    assert engine.calls("POST", r"/containers/create") == []
