"""grapharc-server's hook implementations: the ``serve`` command (light module)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from grapharc.plugins import hookimpl

if TYPE_CHECKING:
    import typer


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from grapharc.server.cli import serve_command

    app.command("serve")(serve_command)
