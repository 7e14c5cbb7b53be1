"""grapharc-mcp's hook implementations: the ``grapharc mcp`` command group (light module)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from grapharc.plugins import hookimpl

if TYPE_CHECKING:
    import typer


@hookimpl
def register_commands(app: typer.Typer) -> None:
    """Declare ``mcp``: its module (and the ``mcp`` SDK) loads only when the command runs."""
    from grapharc.cli.lazy import lazy_command

    lazy_command(app, "mcp", "grapharc.mcp.hooks:add_mcp_group",
                 "Model Context Protocol: MCP servers' tools under GraphARC's governance.", group=True)


def add_mcp_group(app: typer.Typer) -> None:
    """Add the real ``mcp`` group to ``app``."""
    from grapharc.mcp.cli import mcp_app

    app.add_typer(mcp_app, name="mcp")
