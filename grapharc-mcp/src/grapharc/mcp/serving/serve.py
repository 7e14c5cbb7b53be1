"""``grapharc mcp serve`` as a library call: open the graphs, check the tools, serve, close."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import closing

import anyio

from grapharc.mcp.serving.calls import GraphTools
from grapharc.mcp.serving.graphs import open_graphs
from grapharc.mcp.serving.server import mcp_server
from grapharc.mcp.serving.transports import Listening, bind, parse_address, serve_http, serve_stdio
from grapharc.session.manager import SessionManager


def serve(sessions: str, registries: Sequence[str], *, lease_seconds: float, http: str | None = None,
          allow_remote: bool = False,
          on_listening: Callable[[Listening], None] = lambda _where: None) -> None:
    """Serve the graphs ``registries`` register over the sessions at ``sessions`` as MCP tools: over
    stdio until the client closes it, or over streamable HTTP on ``http`` (HOST:PORT) until a signal.
    Every fallible step (the registries, the tool names, the address) is checked before serving."""
    manager = open_graphs(sessions, registries, lease_seconds=lease_seconds)
    try:
        server = mcp_server(GraphTools(manager))
        listener = bind(*parse_address(http), allow_remote=allow_remote) if http is not None else None
    except BaseException:
        manager.close()
        raise
    if listener is None:
        anyio.run(_closing_after, manager, lambda: serve_stdio(server))
        return
    with closing(listener):
        anyio.run(_closing_after, manager, lambda: serve_http(server, listener, on_listening))


async def _closing_after(manager: SessionManager, serving: Callable[[], Awaitable[None]]) -> None:
    """Await ``serving()``, then close ``manager`` (its async checkpointer lives on this loop)."""
    try:
        await serving()
    finally:
        await manager.aclose()
