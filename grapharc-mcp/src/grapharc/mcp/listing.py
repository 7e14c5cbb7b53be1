"""What ``grapharc mcp list`` shows: each configured MCP server and how it is reached."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from grapharc.mcp.config import read_servers


def list_servers(*, config: Path | None, policy: Path | None, cwd: Path) -> dict[str, Any]:
    """The configured servers as a document: name, transport and status."""
    path, servers = read_servers(config=config, cwd=cwd)
    return {"config": str(path) if path else "no grapharc.toml",
            "servers": [{"name": server.name, "transport": server.transport, "status": "configured",
                         "tools": []} for server in servers]}
