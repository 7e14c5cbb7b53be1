"""``grapharc serve``: bind the address, then run the HTTP API on it until a signal stops it.

The address is announced only once the server accepts requests: ``serving on URL`` on stderr,
or with ``--json`` one document on stdout whose ``port`` is the port actually bound.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from grapharc.cli.options import Port, Ranged, option
from grapharc.cli.output import JSON_OPTION_HELP, write_json
from grapharc.server.listener import ListeningAddress, listen
from grapharc.values import Number

DEFAULT_DRAIN_TIMEOUT = 10.0
DRAIN_TIMEOUT = Ranged(Number(0, 3600, "seconds", above=False), "SECONDS")

DRAIN_TIMEOUT_HELP = ("Seconds to let in-flight requests finish after SIGTERM or Ctrl+C before stopping "
                      "without them (exit 1).")


def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Port = 8000,
    drain_timeout: Annotated[float, option("--drain-timeout", kind=DRAIN_TIMEOUT,
                                           help=DRAIN_TIMEOUT_HELP)] = DEFAULT_DRAIN_TIMEOUT,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Serve the GraphARC HTTP API until SIGTERM or Ctrl+C, then finish in-flight requests and exit 0."""
    from grapharc.server.app import create_app
    from grapharc.server.lifecycle import serve_until_stopped

    listener = listen(host, port)
    serve_until_stopped(listener, create_app(), drain_timeout=drain_timeout,
                        on_listening=lambda address: announce(address, as_json))


def announce(address: ListeningAddress, as_json: bool) -> None:
    """Say where the server listens: one JSON document on stdout, or a line on stderr."""
    if as_json:
        write_json({"ok": True, "url": address.url, "host": address.host, "port": address.port,
                    "pid": os.getpid()})
    else:
        sys.stderr.write(f"serving on {address.url} (pid {os.getpid()}; Ctrl+C or SIGTERM stops)\n")
        sys.stderr.flush()
