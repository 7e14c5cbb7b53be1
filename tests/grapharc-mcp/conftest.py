"""Fixtures for grapharc-mcp's tests: MCP servers written with the SDK (mcp_servers.py), started
over streamable HTTP on 127.0.0.1 and stopped after each test (see mcp_setup.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # mcp_setup, mcp_agents: the helper modules beside this file


@pytest.fixture
def http_server() -> Iterator[Callable[[str], Any]]:
    """Start MCP servers over streamable HTTP (``http_server(kind).url``); each is stopped after the test."""
    from mcp_setup import HttpServer

    started: list[HttpServer] = []

    def start(kind: str) -> HttpServer:
        started.append(HttpServer(kind))
        return started[-1]

    yield start
    for server in started:
        server.close()
