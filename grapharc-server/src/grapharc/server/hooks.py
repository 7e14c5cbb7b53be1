"""grapharc-server's hook implementations: the ``serve`` command (light module)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from grapharc.plugins import hookimpl

if TYPE_CHECKING:
    import typer


@hookimpl
def register_commands(app: typer.Typer) -> None:
    """Declare ``serve``: its module (and what it imports) loads only when the command runs."""
    from grapharc.cli.lazy import lazy_command

    lazy_command(app, "serve", "grapharc.server.hooks:add_serve_command",
                 "Serve the GraphARC HTTP API until SIGTERM or Ctrl+C, then finish in-flight "
                 "requests and exit 0.")


def add_serve_command(app: typer.Typer) -> None:
    """Add the real ``serve`` command to ``app``."""
    from grapharc.server.cli import serve_command

    app.command("serve")(serve_command)
