"""The HTTP application: health, the plugin inventory and, given sessions, the JSON API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI

from grapharc._version import __version__

if TYPE_CHECKING:
    from grapharc.server.api.context import ApiContext


def create_app(api: ApiContext | None = None) -> FastAPI:
    """Build the FastAPI app (a fresh one per call, so tests can hold their own); with ``api``, the
    assistants, threads and runs routes over its sessions."""

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        if api is not None:
            await api.manager.aclose()

    app = FastAPI(title="GraphARC", version=__version__, lifespan=lifespan)

    @app.get("/healthz")
    def healthz() -> dict[str, Any]:
        return {"ok": True, "version": __version__}

    @app.get("/plugins")
    def plugins() -> dict[str, Any]:
        from grapharc.plugins.report import plugin_report

        return plugin_report()

    if api is not None:
        from grapharc.server.api.routes import mount_api

        mount_api(app, api)
    return app
