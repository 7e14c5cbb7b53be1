"""An MCP server's tools as GraphARC tools: named ``PREFIX.tool``, shown with the server's input
schema, validated against it before each call, and run on the server by the ``mcp`` executor.

Whether a call may change something comes from the operator's ``side_effects`` setting if it names
the tool, else from the tool's annotations: ``readOnlyHint`` true is a read; anything else may
change something (``destructiveHint`` defaults to true in MCP), idempotent only when
``idempotentHint`` says so. A call that may change something carries an idempotency key in the
agent's ledger, as a built-in writing tool's does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
from pydantic import BaseModel, ConfigDict

from grapharc.harness.tools import TOOL_NAME, SideEffect, Tool, ToolArgumentError
from grapharc.mcp.config import ServerConfig
from grapharc.mcp.connection import ServerConnection
from grapharc.mcp.errors import McpResultTooLargeError, McpToolFailedError, McpToolRefusedError
from grapharc.mcp.plain_schemas import QuickCheck, quick_check
from grapharc.mcp.schemas import SchemaRefusedError, checked_validator, problems

MAX_DESCRIPTION_CHARS = 4000
"""A tool description longer than this is cut before a model sees it."""
EXECUTOR_NAME = "mcp"


class _AnyArguments(BaseModel):
    """The arguments model of an MCP tool: its schema is the server's, checked with jsonschema."""

    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True)
class McpTool(Tool):
    """A tool of an MCP server (see the module docstring)."""

    remote_name: str = ""
    """The tool's name on its server (``NAME.tool`` is GraphARC's)."""
    input_schema: Mapping[str, Any] | None = field(default=None, compare=False)
    validator: Any = field(default=None, compare=False)
    quick: QuickCheck | None = field(default=None, compare=False)
    """A plain schema's compiled check (``grapharc.mcp.plain_schemas``): arguments it passes skip
    ``jsonschema``; the rest are judged by ``validator``."""

    def parameters(self) -> dict[str, Any]:
        return dict(self.input_schema or {"type": "object"})

    def arguments(self, raw: Any) -> dict[str, Any]:
        if not isinstance(raw, Mapping) or not all(isinstance(key, str) for key in raw):
            raise ToolArgumentError(f"tool {self.name!r} takes an object of named arguments, "
                                    f"got {type(raw).__name__}")
        arguments = dict(raw)
        if self.quick is not None and self.quick(arguments):
            return arguments
        found = problems(self.validator, arguments)
        if found:
            raise ToolArgumentError(f"tool {self.name!r}: {'; '.join(found)}")
        return arguments


class McpExecutor:
    """Runs an MCP tool's call on its server and returns the result's text (the ``mcp`` executor).

    ``args`` are the ones the harness already checked against the tool's schema (every call is,
    by ``McpTool.arguments``, before its permission is decided), so they are sent as they are
    rather than checked a second time on every call.
    """

    name = EXECUTOR_NAME

    def __init__(self, connection: ServerConnection) -> None:
        self.connection = connection

    def run(self, tool: Tool, args: Mapping[str, Any], *, workspace: str | Path,
            timeout: float | None = None) -> Any:
        if not isinstance(tool, McpTool):
            raise McpToolRefusedError(f"the mcp executor runs MCP tools only, not {tool.name!r}")
        server = self.connection.server
        seconds = server.call_timeout if timeout is None else min(server.call_timeout, timeout)
        result = self.connection.call(tool.remote_name, dict(args), seconds)
        text = result_text(result)
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > server.max_result_bytes:
            raise McpResultTooLargeError(f"tool {tool.name!r} returned {size} bytes, more than MCP server "
                                         f"{server.name!r} accepts ({server.max_result_bytes}, its "
                                         "max_result_bytes); the result was dropped")
        if result.is_error:
            raise McpToolFailedError(f"tool {tool.name!r} reported an error: {text}")
        return text


def result_text(result: types.CallToolResult) -> str:
    """A tool result as the text a model is shown: its text blocks, other blocks described, or its
    structured content as JSON when it has no blocks."""
    parts = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            parts.append(f"[{block.type}: {block.mime_type}, {len(block.data)} base64 characters]")
        elif isinstance(block, types.ResourceLink):
            parts.append(f"[resource link: {block.uri}]")
        elif isinstance(block, types.EmbeddedResource):
            resource = block.resource
            parts.append(getattr(resource, "text", None) or f"[resource: {resource.uri}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    return "\n".join(parts)


def side_effect_of(server: ServerConfig, listed: types.Tool) -> tuple[SideEffect, bool]:
    """(what a call may change, whether repeating it is harmless): the operator's word, else the
    tool's annotations (see the module docstring)."""
    override = server.side_effects.get(listed.name)
    if override is not None:
        return (SideEffect.READ, True) if override == "read_only" else (SideEffect.EXEC, False)
    hints = listed.annotations
    if hints is not None and hints.read_only_hint is True:
        return SideEffect.READ, True
    return SideEffect.EXEC, bool(hints is not None and hints.idempotent_hint is True)


def build_tool(server: ServerConfig, listed: types.Tool, executor: McpExecutor) -> McpTool:
    """``listed`` as a GraphARC tool, or ``McpToolRefusedError`` naming server and tool."""
    name = f"{server.tool_prefix}.{listed.name}"
    if TOOL_NAME.fullmatch(name) is None:
        raise McpToolRefusedError(f"MCP server {server.name!r}, tool {listed.name!r}: its name is not "
                                  "1-64 letters, digits, '_' or '-' starting with a letter or '_'")
    try:
        validator = checked_validator(server.name, listed.name, listed.input_schema)
    except SchemaRefusedError as exc:
        raise McpToolRefusedError(str(exc)) from None
    side_effect, idempotent = side_effect_of(server, listed)
    description = (listed.description or listed.title or listed.name)[:MAX_DESCRIPTION_CHARS]
    return McpTool(name=name, description=description, args_model=_AnyArguments, function=_runs_on_server,
                   side_effect=side_effect, needs_network=server.transport == "http", idempotent=idempotent,
                   executor=executor, server=server.name, remote_name=listed.name,
                   input_schema=listed.input_schema, validator=validator,
                   quick=quick_check(listed.input_schema))


def _runs_on_server(workspace: str, **arguments: Any) -> Any:
    """An MCP tool's function: never called, since its own executor sends the call to its server."""
    raise McpToolRefusedError("an MCP tool runs on its server through the mcp executor, not in process")
