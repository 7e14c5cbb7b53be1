"""grapharc-mcp's hook implementations: the ``[mcp]`` tool source and the ``grapharc mcp`` command
group (light module: the ``mcp`` SDK is imported only when a source opens or a command runs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from grapharc.plugins import RegisterToolSource, ToolSourceInfo, hookimpl

if TYPE_CHECKING:
    import typer


@hookimpl
def register_tool_sources(register: RegisterToolSource) -> None:
    """``[mcp.servers.NAME]`` in grapharc.toml or the policy document, or ``--mcp-server``: each
    server's tools in the agent's registry."""
    register(ToolSourceInfo(name="mcp", factory="grapharc.mcp.source:open_source",
                            description="MCP servers' tools, as NAME.tool, governed like any tool",
                            from_flags="grapharc.mcp.flags:table_from_flags",
                            check="grapharc.mcp.config:describe_servers"))


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
