"""Fixtures for grapharc-mcp's tests: MCP servers written with the SDK (mcp_servers.py), started
over stdio by the code under test or over streamable HTTP on 127.0.0.1 by the fixture."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # mcp_servers, mcp_agents: the helper modules beside this file
SERVERS = HERE / "mcp_servers.py"


def stdio_entry(kind: str, **extra: Any) -> dict[str, Any]:
    """The ``[mcp.servers.NAME]`` table of a stdio server of ``kind``."""
    return {"command": sys.executable, "args": [str(SERVERS), kind], **extra}


def toml_entry(name: str, table: dict[str, Any]) -> str:
    """``table`` as the TOML of ``[mcp.servers.NAME]``."""
    import json

    lines = [f"[mcp.servers.{name}]"]
    for key, value in table.items():
        if isinstance(value, dict):
            inline = ", ".join(f"{k} = {json.dumps(v)}" for k, v in value.items())
            lines.append(f"{key} = {{ {inline} }}")
        else:
            lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


class HttpServer:
    """An MCP server of one kind over streamable HTTP on 127.0.0.1, in its own process."""

    def __init__(self, kind: str) -> None:
        self.process = subprocess.Popen([sys.executable, str(SERVERS), kind, "--http", "0"],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()  # blocks until the server listens (or dies: "")
        if not line.startswith("PORT "):
            self.close()
            pytest.fail(f"the {kind} MCP server did not start: {line!r} {self.process.stderr.read()}")
        self.url = f"http://127.0.0.1:{int(line.split()[1])}/mcp"

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def http_server() -> Iterator[Callable[[str], HttpServer]]:
    """Start MCP servers over streamable HTTP; each is stopped after the test."""
    started: list[HttpServer] = []

    def start(kind: str) -> HttpServer:
        started.append(HttpServer(kind))
        return started[-1]

    yield start
    for server in started:
        server.close()


@pytest.fixture
def open_sources() -> Iterator[list[Any]]:
    """Tool sources a test opened, closed after it (their stdio servers stop with them)."""
    sources: list[Any] = []
    yield sources
    for source in sources:
        source.close()
