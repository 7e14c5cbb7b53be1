"""An assistant's state model as JSON Schema and its drawn graph, through the official ``langgraph-sdk``
client (``get_schemas`` and ``get_graph``, what LangGraph Studio reads), and their refusals."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.errors import NotFoundError
from pydantic import ConfigDict
from server_process import api_server_url

from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState
from grapharc.server.api.assistants import get_schemas
from grapharc.session.manager import SessionManager

api_server = api_server_url("assistant-schemas")
"""The module's one server: its tests read assistants and change nothing."""

CREDIT = "credit-approval"


def test_the_sdk_reads_an_assistants_schemas_and_graph(api_server: str) -> None:
    async def story() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        client = get_client(url=api_server)
        return (await client.assistants.get_schemas(CREDIT), await client.assistants.get_graph(CREDIT),
                await client.assistants.get_graph(CREDIT, xray=1))

    schemas, graph, xrayed = asyncio.run(story())
    assert schemas["graph_id"] == CREDIT
    state = schemas["state_schema"]
    assert state["properties"]["application_id"]["type"] == "string"
    assert state["properties"]["amount"]["type"] == "integer"
    assert state.get("additionalProperties") is False  # unknown input fields are refused, and it says so
    assert schemas["input_schema"] == schemas["output_schema"] == state
    assert schemas["config_schema"] is None and schemas["context_schema"] is None
    nodes = {node["id"] for node in graph["nodes"]}
    assert {"__start__", "fetch_application", "score", "assess", "__end__"} <= nodes
    assert {"source": "__start__", "target": "fetch_application"} in [
        {"source": e["source"], "target": e["target"]} for e in graph["edges"]]
    assert {node["id"] for node in xrayed["nodes"]} == nodes


def test_an_unknown_assistant_or_a_bad_xray_is_refused_with_a_problem(api_server: str) -> None:
    async def unknown(path: str) -> None:
        client = get_client(url=api_server)
        with pytest.raises(NotFoundError):
            read = client.assistants.get_schemas if path.startswith("s") else client.assistants.get_graph
            await read(path)

    asyncio.run(unknown("schemas-of-nothing"))
    asyncio.run(unknown("graph-of-nothing"))
    with httpx.Client(base_url=api_server, timeout=30) as client:
        for xray in ("sideways", "1e999"):
            refused = client.get(f"/assistants/{CREDIT}/graph", params={"xray": xray})
            assert refused.status_code == 422, refused.text
            assert refused.headers["content-type"] == "application/problem+json"
            assert "xray" in refused.text


class Opaque:
    """A value JSON Schema cannot describe."""


class OpaqueState(GraphARCState):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    thing: Opaque | None = None


def test_a_state_model_json_schema_cannot_describe_gives_null_schemas(tmp_path: Path) -> None:
    manager = SessionManager(tmp_path / "sessions")
    graph = GraphARC(OpaqueState, name="opaque")
    graph.add_node("look", lambda state: {}, writes=set())
    graph.add_edge(START, "look")
    graph.add_edge("look", END)
    manager.register(graph)
    try:
        schemas = get_schemas("opaque", SimpleNamespace(manager=manager), None)  # type: ignore[arg-type]
    finally:
        manager.close()
    assert schemas == {"graph_id": "opaque", "input_schema": None, "output_schema": None,
                       "state_schema": None, "config_schema": None, "context_schema": None}
