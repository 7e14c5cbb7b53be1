"""What ``grapharc mcp serve`` lists: one tool per registered graph, and the two thread readers.

One tool per graph, named for it, rather than one ``start_run(graph, input)``: each tool's input
schema is its graph's own state schema, so an MCP client (and the model behind it) sees the fields
a run takes and their types, instead of an opaque ``input`` object only the run would check. The
graph names must therefore be MCP tool names (SEP-986: 1-128 of ``A-Za-z0-9._-``), and none may be
a reader's name; a graph that is not one is refused when the server starts, never renamed.
"""

from __future__ import annotations

from typing import Any

import mcp.types as types
from mcp.shared.tool_name_validation import validate_tool_name
from pydantic import BaseModel, ConfigDict, Field

from grapharc.errors import GraphARCError
from grapharc.session.manager import SessionManager
from grapharc.session.registry import RegisteredGraph

STATUS_TOOL = "thread_status"
PENDING_TOOL = "pending_approvals"

NOT_DECIDED_HERE = ("Deciding an approval is not an MCP tool: a person decides it in GraphARC's approval "
                    "inbox or with `grapharc session approve THREAD` (or `reject`), and the thread carries "
                    f"on from its store; read it afterwards with {STATUS_TOOL}.")


class ToolNameError(GraphARCError):
    """A registered graph's name cannot be an MCP tool's name."""


class ThreadQuery(BaseModel):
    """``thread_status``'s arguments."""

    model_config = ConfigDict(extra="forbid")
    thread_id: str = Field(min_length=1, description="The thread id a run tool returned.")


class PendingQuery(BaseModel):
    """``pending_approvals``' arguments."""

    model_config = ConfigDict(extra="forbid")
    thread_id: str | None = Field(default=None, description="Only this thread's approvals (default: "
                                                            "every paused thread's).")


def offered_tools(manager: SessionManager) -> dict[str, types.Tool]:
    """Every tool served, by name: one per graph registered on ``manager``, then the readers
    (``ToolNameError`` for a graph whose name cannot be a tool's)."""
    tools: dict[str, types.Tool] = {}
    for name in manager.graphs.names():
        checked_name(name)
        tools[name] = graph_tool(manager.graphs.get(name))
    for reader in (status_tool(), pending_tool()):
        if reader.name in tools:
            raise ToolNameError(f"graph {reader.name!r} has the name of the {reader.name} tool, which this "
                                "server offers too", hint="register the graph under another name")
        tools[reader.name] = reader
    return tools


def checked_name(graph: str) -> None:
    """Refuse a graph name that is no valid MCP tool name, naming why."""
    verdict = validate_tool_name(graph)
    if not verdict.is_valid:
        raise ToolNameError(f"graph {graph!r} cannot be offered as an MCP tool: "
                            + "; ".join(verdict.warnings),
                            hint="an MCP tool name is 1 to 128 of A-Z, a-z, 0-9, '_', '-' and '.'; "
                                 "register the graph under such a name")


def graph_tool(graph: RegisteredGraph) -> types.Tool:
    """The tool that starts a governed run of ``graph``; its input schema is the graph's state's."""
    state = graph.builder.state
    about = (state.__doc__ or "").strip().splitlines()
    return types.Tool(
        name=graph.name,
        title=f"Run {graph.name}",
        description=(f"Start a governed GraphARC run of the graph {graph.name!r} with these state values "
                     f"as input{': ' + about[0] if about else ''}. It runs under the graph's budgets, "
                     "policy and trace until it completes, fails or pauses for a person's approval, and "
                     "returns the thread id, its status, and its state values (completed) or the "
                     f"approvals it waits on (paused). {NOT_DECIDED_HERE}"),
        input_schema=input_schema(graph),
        annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                          idempotent_hint=False, open_world_hint=True),
    )


def input_schema(graph: RegisteredGraph) -> dict[str, Any]:
    """The graph's state model as JSON Schema; an object of any fields when a field's type has no
    JSON Schema (the run still checks the input against the state model)."""
    try:
        schema: dict[str, Any] = graph.builder.state.model_json_schema()
    except Exception:  # pydantic refuses a type JSON Schema cannot describe, in classes of its own
        return {"type": "object", "description": f"the state values of {graph.name!r} (a field's type has "
                                                 "no JSON Schema; the run checks them)"}
    return schema


def status_tool() -> types.Tool:
    """The tool that reads where a thread stands."""
    return types.Tool(
        name=STATUS_TOOL, title="Thread status",
        description=("Where a GraphARC thread stands: its status (created, running, paused, completed, "
                     "rejected, expired, failed), outcome or error, last node, the approvals it waits on, "
                     f"and its state values. Read-only. {NOT_DECIDED_HERE}"),
        input_schema=ThreadQuery.model_json_schema(),
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )


def pending_tool() -> types.Tool:
    """The tool that lists the open approvals."""
    return types.Tool(
        name=PENDING_TOOL, title="Pending approvals",
        description=("The approvals paused GraphARC threads wait on, oldest first: each with its thread, "
                     "graph, node, the question asked and the arguments it is about, and who may decide "
                     f"it. Read-only. {NOT_DECIDED_HERE}"),
        input_schema=PendingQuery.model_json_schema(),
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
