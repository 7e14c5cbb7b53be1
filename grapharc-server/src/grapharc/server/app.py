"""The HTTP application: health and the plugin inventory, read from core's registries."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from grapharc._version import __version__


def create_app() -> FastAPI:
    """Build the FastAPI app (a fresh one per call, so tests can hold their own)."""
    app = FastAPI(title="GraphARC", version=__version__)

    @app.get("/healthz")
    def healthz() -> dict[str, Any]:
        return {"ok": True, "version": __version__}

    @app.get("/plugins")
    def plugins() -> dict[str, Any]:
        from grapharc.plugins.report import plugin_report

        return plugin_report()

    return app
