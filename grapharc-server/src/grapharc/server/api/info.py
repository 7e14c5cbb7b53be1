"""``GET /info``: what this server is, in the shape LangGraph's server answers it (its version, the
LangGraph it runs, which optional features it has), so a client that checks a server's features
before using them reads the truth: assistants yes (the registered graphs), crons yes, LangSmith
tracing no (GraphARC's trace is its own, ``GET /threads/{id}/trace``)."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from fastapi import APIRouter

from grapharc._version import __version__

router = APIRouter(tags=["meta"])


@router.get("/info")
async def info() -> dict[str, Any]:
    """The server's version and LangGraph's, and what it offers (assistants and crons, no
    LangSmith), as LangGraph's server answers ``/info``."""
    return {"version": __version__, "langgraph_py_version": version("langgraph"),
            "flags": {"assistants": True, "crons": True, "langsmith": False},
            "host": {"kind": "self-hosted", "project_id": None, "revision_id": None, "tenant_id": None}}
