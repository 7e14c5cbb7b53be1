"""``grapharc mcp serve --http`` on loopback has no authentication, so it answers only requests
addressed to a loopback name: a page on another site that resolves its own name to 127.0.0.1 (DNS
rebinding) or posts from its own origin is refused before any tool runs."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import pytest
from mcp_serve_process import http_server, serve_command

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "test", "version": "0"}}}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.2"])  # the SDK guards only the first by itself
def test_only_loopback_hosts_and_origins_are_answered(tmp_path: Path, address: str) -> None:
    with http_server(serve_command(tmp_path / "sessions", "--http", f"{address}:0", "--json")) as server:
        url = server.json_announcement()["url"]
        with httpx.Client(timeout=30) as client:
            rebound = client.post(url, json=INITIALIZE, headers={**HEADERS, "Host": "evil.example:80"})
            foreign = client.post(url, json=INITIALIZE, headers={**HEADERS, "Origin": "http://evil.example"})
            local = client.post(url, json=INITIALIZE, headers={**HEADERS, "Origin": "http://localhost:3000"})
        server.process.send_signal(signal.SIGTERM)
        assert server.wait() == 0
    assert rebound.status_code == 421 and foreign.status_code == 403
    assert local.status_code == 200, local.text
