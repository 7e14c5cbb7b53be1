"""Run a scripted agent whose tools come from MCP servers, under a policy document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage

from grapharc.harness.agent import AgentNode
from grapharc.harness.setup import AgentSettings, build_agent
from grapharc.testing import ScriptedChatModel

POLICY_HEAD = 'version = "mcp-tests"\n'


def policy_rules(*rules: tuple[str, str, str]) -> str:
    """A policy document of tool rules ``(id, tool glob, action)``."""
    return POLICY_HEAD + "".join(
        f'[[rules]]\nid = "{rule_id}"\nresource = "tool"\ntool = "{tool}"\naction = "{action}"\n'
        f'reason = "{rule_id}"\n' for rule_id, tool, action in rules)


def call(name: str, args: dict[str, Any], index: int = 1) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"c{index}"}


def reply(*calls: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=list(calls))


def layer(tmp_path: Path, servers: dict[str, dict[str, Any]], origin: str = "") -> dict[str, Any]:
    """One ``tool_sources`` layer of ``[mcp.servers]`` (by default as grapharc.toml in ``tmp_path``)."""
    return {"origin": origin or str(tmp_path / "grapharc.toml"), "table": {"servers": servers},
            "base": str(tmp_path)}


def agent_for(tmp_path: Path, servers: dict[str, dict[str, Any]], policy: str, script: list[Any],
              **options: Any) -> tuple[AgentNode, ScriptedChatModel]:
    """The agent an ``[mcp]`` table with ``servers`` and the policy text build, driven by ``script``."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    (tmp_path / "policy.toml").write_text(policy)
    settings = AgentSettings(task="use the tools", workspace=str(workspace), model="mock/x",
                             policy=str(tmp_path / "policy.toml"), policy_source="flag", tools=(),
                             tool_sources={"mcp": [layer(tmp_path, servers)]},
                             **options)
    model = ScriptedChatModel(responses=script)
    return build_agent(settings, model=model), model


def run(agent: AgentNode, tmp_path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run ``agent`` to its end: its final state and its trace events."""
    graph = agent.graph()
    trace = tmp_path / "trace.jsonl"
    graph.trace = trace
    compiled = graph.compile()
    try:
        out = compiled.invoke({"task": "use the tools"})
    finally:
        compiled.close()
    return out, [json.loads(line) for line in trace.read_text().splitlines()]


def of_phase(events: list[dict[str, Any]], phase: str) -> list[dict[str, Any]]:
    return [event for event in events if event["phase"] == phase]


def told(out: dict[str, Any]) -> list[str]:
    """What the model was told of each tool call, in order."""
    return [message.content for message in out["messages"] if message.type == "tool"]


def close_sources(agent: AgentNode) -> None:
    """Stop the MCP servers the agent's tools run on."""
    for tool in agent.tools:
        connection = getattr(tool.executor, "connection", None)
        if connection is not None:
            connection.close()
