"""The errors grapharc-mcp raises: each one line naming the server (and tool) and what went wrong."""

from __future__ import annotations

from grapharc.errors import GraphARCError


class McpConnectError(GraphARCError):
    """An MCP server that could not be started or reached, or did not finish its handshake."""


class McpServerDiedError(GraphARCError):
    """The server's connection closed while a call was in flight: the call failed."""


class McpCallError(GraphARCError):
    """The server answered a call with a protocol error."""


class McpToolRefusedError(GraphARCError):
    """A server's tool GraphARC will not offer: a name it cannot take, or a refused schema."""


class McpResultTooLargeError(GraphARCError):
    """A tool result larger than the server's ``max_result_bytes``: not kept, not shown."""


class McpToolFailedError(GraphARCError):
    """The server ran the tool and reported an error (``isError``)."""
