"""``grapharc serve``: run the HTTP API with uvicorn on a local address."""

from __future__ import annotations

from typing import Annotated

import typer

from grapharc.cli.output import JSON_OPTION_HELP

MAX_PORT = 65535


def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0 picks a free one).")] = 8000,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Serve the GraphARC HTTP API until interrupted."""
    import sys

    from grapharc.cli.output import fail

    if not 0 <= port <= MAX_PORT:
        fail(ValueError(f"--port must be between 0 and {MAX_PORT}, got {port}"), as_json)
    import uvicorn

    from grapharc.server.app import create_app

    sys.stderr.write(f"serving GraphARC on http://{host}:{port}\n")
    try:
        uvicorn.run(create_app(), host=host, port=port, log_level="warning")
    except OSError as exc:
        fail(exc, as_json)
