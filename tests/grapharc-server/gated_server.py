"""``grapharc serve`` with a test app in place of the API, run as its own process by the tests.

The command, its signal handling and its exit codes are the real ones; only
``grapharc.server.app.create_app`` is replaced, by one of these apps:

- ``gated``: ``GET /gated`` says so on stderr, then stays in flight until a line arrives on stdin;
- ``failing-startup``: the app's lifespan raises, so the server never starts.

Usage: ``python gated_server.py gated|failing-startup [grapharc serve options...]``.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

import grapharc.server.app
from grapharc.cli.main import run

IN_FLIGHT_NOTICE = "gated request in flight"


def gated_app(**_settings: object) -> FastAPI:
    """An app whose one request finishes only when the test writes a line to stdin."""
    app = FastAPI()

    @app.get("/gated")
    def gated() -> dict[str, bool]:
        sys.stderr.write(IN_FLIGHT_NOTICE + "\n")
        sys.stderr.flush()
        sys.stdin.readline()
        return {"finished": True}

    return app


def failing_startup_app(**_settings: object) -> FastAPI:
    """An app whose lifespan fails before it serves anything."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        raise RuntimeError("the store this app needs is missing")
        yield

    return FastAPI(lifespan=lifespan)


APPS = {"gated": gated_app, "failing-startup": failing_startup_app}

if __name__ == "__main__":
    grapharc.server.app.create_app = APPS[sys.argv[1]]
    sys.exit(run(["serve", *sys.argv[2:]]))
