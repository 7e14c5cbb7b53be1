"""grapharc-server's hook implementations: the ``serve`` command (light module)."""

from __future__ import annotations

from typing import Any

from grapharc.plugins import hookimpl


@hookimpl
def register_commands(app: Any) -> None:
    from grapharc.server.cli import serve_command

    app.command("serve")(serve_command)
