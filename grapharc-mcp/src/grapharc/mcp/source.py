"""The ``[mcp]`` tool source: every configured server connected, its tools offered to the agent.

``open_source(layers)`` is the factory grapharc-mcp registers with core's
``register_tool_sources`` hook: the ``[mcp]`` tables of grapharc.toml, of the policy document
and of ``--mcp-server`` flags, merged by :func:`grapharc.mcp.config.layered_servers`. A server
that cannot be reached, and a tool whose name or schema is refused, stop the agent from being
built with an error naming them: an agent never starts with less than its configuration says
without being told. Tools a server announces later (``notifications/tools/list_changed``, or a
restart) are offered by :meth:`McpToolSource.changed_tools` and pass through the same permission
rules as the rest before any call. An agent's tools step runs inside :meth:`McpToolSource.tool_step`,
so its calls drive the MCP loop on the step's own thread (see :mod:`grapharc.mcp.loop`).
"""

from __future__ import annotations

import atexit
from collections.abc import Iterable
from contextlib import AbstractContextManager
from typing import Any

from grapharc.mcp import loop
from grapharc.mcp.config import ServerConfig, layered_servers
from grapharc.mcp.connection import ServerConnection
from grapharc.mcp.errors import McpToolRefusedError
from grapharc.mcp.tools import McpExecutor, McpTool, build_tool
from grapharc.plugins import ToolSourceLayer


class ServerTools:
    """One server's connection and the tools of it already offered, by the server's own names."""

    def __init__(self, server: ServerConfig) -> None:
        self.connection = ServerConnection(server)
        self.executor = McpExecutor(self.connection)
        self.offered: dict[str, McpTool] = {}
        self.refused: dict[str, str] = {}

    def take(self, listing: list[Any], *, strict: bool) -> list[McpTool]:
        """The tools of ``listing`` not offered yet; a refused one raises when ``strict`` (at
        connect), else is kept in ``refused`` and never offered."""
        new = []
        for listed in listing:
            if listed.name in self.offered or listed.name in self.refused:
                continue
            try:
                tool = build_tool(self.connection.server, listed, self.executor)
            except McpToolRefusedError as exc:
                if strict:
                    raise
                self.refused[listed.name] = str(exc)
                continue
            self.offered[listed.name] = tool
            new.append(tool)
        return new


class McpToolSource:
    """Every server of an ``[mcp]`` table, connected (see the module docstring)."""

    def __init__(self, servers: list[ServerConfig]) -> None:
        self.servers = [ServerTools(server) for server in servers]
        atexit.register(self.close)

    def tools(self) -> list[McpTool]:
        """Connect every server and return all their tools (the first failure raises)."""
        tools: list[McpTool] = []
        for server in self.servers:
            tools += server.take(server.connection.connect(), strict=True)
        return tools

    def changed_tools(self) -> list[McpTool]:
        """Tools the servers announced since they were last asked (refused ones left out)."""
        new: list[McpTool] = []
        for server in self.servers:
            listing = server.connection.changed_tools()
            if listing is not None:
                new += server.take(listing, strict=False)
        return new

    def tool_step(self) -> AbstractContextManager[None]:
        """Around an agent's tools step: its MCP calls run the MCP loop on the step's own thread,
        which gives it back to the background thread when the step ends (``grapharc.mcp.loop``)."""
        return loop.driven()

    def close(self) -> None:
        for server in self.servers:
            server.connection.close()


def open_source(layers: Iterable[ToolSourceLayer]) -> McpToolSource:
    """The factory of the ``mcp`` tool source: every layer's ``[mcp]`` table, merged."""
    return McpToolSource(layered_servers(layers))
