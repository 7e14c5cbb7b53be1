"""The MCP server itself: the ``mcp`` SDK's low-level ``Server``, answering ``tools/list`` and
``tools/call`` from the graph tools (``grapharc.mcp.serving.calls``); the SDK does the protocol.

The low-level ``Server`` rather than ``MCPServer`` (the SDK's FastMCP): a tool per graph takes the
graph's state schema as its input schema, which ``MCPServer`` would derive from a Python signature.
"""

from __future__ import annotations

from importlib.metadata import version

import mcp.types as types
from mcp.server import Server, ServerRequestContext

from grapharc.mcp.serving.calls import GraphTools
from grapharc.mcp.serving.tools import NOT_DECIDED_HERE

INSTRUCTIONS = ("Each graph tool starts a governed GraphARC run of that graph and returns its thread id and "
                "status; thread_status reads a thread, pending_approvals lists what paused threads wait on. "
                + NOT_DECIDED_HERE)


def mcp_server(tools: GraphTools) -> Server[object]:
    """An MCP server offering ``tools``."""

    async def list_tools(_ctx: ServerRequestContext[object],
                         _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        """Every tool, in one page (a server offers a tool per registered graph, a handful)."""
        return types.ListToolsResult(tools=list(tools.tools.values()))

    async def call_tool(_ctx: ServerRequestContext[object],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        """The named tool's answer (``GraphTools.call``)."""
        return await tools.call(params.name, params.arguments)

    return Server("grapharc", version=version("grapharc-mcp"), title="GraphARC graphs",
                  instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool)
