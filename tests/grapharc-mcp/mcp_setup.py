"""How grapharc-mcp's tests configure and start MCP servers (mcp_servers.py): over stdio, started by
the code under test from a config entry, or over streamable HTTP on 127.0.0.1, started here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SERVERS = Path(__file__).parent / "mcp_servers.py"


def stdio_entry(kind: str, **extra: Any) -> dict[str, Any]:
    """The ``[mcp.servers.NAME]`` table of a stdio server of ``kind``."""
    return {"command": sys.executable, "args": [str(SERVERS), kind], **extra}


def toml_entry(name: str, table: dict[str, Any]) -> str:
    """``table`` as the TOML of ``[mcp.servers.NAME]``."""
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
