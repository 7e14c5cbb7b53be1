"""``grapharc serve``: bind the address, then run the HTTP API on it until a signal stops it.

The address is announced only once the server accepts requests: ``serving on URL`` on stderr,
or with ``--json`` one document on stdout whose ``port`` is the port actually bound.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from grapharc.cli.output import JSON_OPTION_HELP, write_json
from grapharc.server.listener import ListeningAddress, listen

DEFAULT_DRAIN_TIMEOUT = 10.0

DRAIN_TIMEOUT_HELP = ("Seconds to let in-flight requests finish after SIGTERM or Ctrl+C before stopping "
                      "without them (exit 1).")

SESSIONS_HELP = ("Session store URI (or a directory) the threads API keeps its threads in; "
                 "with it the server offers assistants, threads and runs.")
REGISTRY_HELP = ("module:attr of a function that registers graphs on the SessionManager "
                 "(repeatable); those graphs are the API's assistants.")


def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0 picks a free one).")] = 8000,
    drain_timeout: Annotated[float, typer.Option(min=0.0, help=DRAIN_TIMEOUT_HELP)] = DEFAULT_DRAIN_TIMEOUT,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
    sessions: Annotated[str | None, typer.Option(help=SESSIONS_HELP)] = None,
    registry: Annotated[list[str] | None, typer.Option(help=REGISTRY_HELP)] = None,
) -> None:
    """Serve the GraphARC HTTP API until SIGTERM or Ctrl+C, then finish in-flight requests and exit 0."""
    from grapharc.server.app import create_app
    from grapharc.server.lifecycle import serve_until_stopped

    api = None
    if sessions is not None or registry:
        from grapharc.server.api.context import open_context

        api = open_context(sessions or ".grapharc/sessions", registry or [])
    listener = listen(host, port)
    serve_until_stopped(listener, create_app(api), drain_timeout=drain_timeout,
                        on_listening=lambda address: announce(address, as_json))


def announce(address: ListeningAddress, as_json: bool) -> None:
    """Say where the server listens: one JSON document on stdout, or a line on stderr."""
    if as_json:
        write_json({"ok": True, "url": address.url, "host": address.host, "port": address.port,
                    "pid": os.getpid()})
    else:
        sys.stderr.write(f"serving on {address.url} (pid {os.getpid()}; Ctrl+C or SIGTERM stops)\n")
        sys.stderr.flush()
