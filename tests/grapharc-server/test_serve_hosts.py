"""Host and Origin against a real ``grapharc serve`` (issue 32, point 3): without an auth file the
server answers only to loopback names and the operator's ``--allowed-host`` names (421 otherwise,
so a DNS-rebinding page cannot approve), and a page of another site may not change anything (403);
with an auth file the Host is free, and a page may post only from the server's own host or a
listed one (the inbox's forms included)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import WebSocket
from fastapi.testclient import TestClient
from inbox_setup import TOKEN, csrf_of, pause_credit_thread, reading, serve_inbox, signed_in
from server_process import ServerProcess, api_server_url, grapharc_serve
from starlette.websockets import WebSocketDisconnect
from test_api_http import CREDIT, _problem, _thread

from grapharc.server import hosts
from grapharc.server.app import create_app

api_server = api_server_url("hosts")
"""The module's one server: each test makes threads of its own and reads only those."""

ELSEWHERE = "attacker.example"
RESUME = {"assistant_id": CREDIT, "command": {"resume": {"decision": "approved", "decider": "credit-desk"}}}


def _paused(client: httpx.Client) -> str:
    """A credit thread paused on the credit desk's sign-off."""
    thread = _thread(client)
    paused = client.post(f"/threads/{thread}/runs/wait",
                         json={"assistant_id": CREDIT, "input": {"application_id": "LN-7310"}})
    assert paused.json()["__interrupt__"], paused.text
    return thread


def _status(client: httpx.Client, thread: str) -> str:
    return str(client.get(f"/threads/{thread}").json()["metadata"]["grapharc_status"])


def _raw(url: str, head: str) -> bytes:
    """Send ``head`` as it is on a socket of its own; the whole answer (the server closes it)."""
    address = httpx.URL(url)
    with socket.create_connection((address.host, address.port)) as raw:
        raw.sendall(head.encode())
        answer = b""
        while chunk := raw.recv(65536):
            answer += chunk
    return answer


def test_without_sign_in_a_rebinding_page_cannot_approve_or_read(api_server: str) -> None:
    """The issue's repro: a resume sent to attacker.example (what a rebinding page's browser sends)
    approved (200, released). Now it is refused before any route, and so is every read."""
    with httpx.Client(base_url=api_server, timeout=60) as client:
        thread = _paused(client)
        rebound = client.post(f"/threads/{thread}/runs/wait", json=RESUME, headers={"Host": ELSEWHERE})
        problem = _problem(rebound, 421)
        assert f"'{ELSEWHERE}'" in problem["detail"] and "DNS rebinding" in problem["detail"]
        assert f"--allowed-host {ELSEWHERE}" in problem["hint"]
        assert "GRAPHARC_ALLOWED_HOSTS" in problem["hint"]
        assert _status(client, thread) == "paused"
        for path in (f"/threads/{thread}", f"/threads/{thread}/trace", "/healthz", "/plugins"):
            _problem(client.get(path, headers={"Host": f"{ELSEWHERE}:8000"}), 421)
        run = client.get(f"/threads/{thread}/runs").json()[0]["run_id"]
        stream = client.get(f"/threads/{thread}/runs/{run}/stream", headers={"Host": ELSEWHERE})
        _problem(stream, 421)
        port = httpx.URL(api_server).port
        for name in ("localhost", f"LOCALHOST:{port}", "127.0.0.1", f"[::1]:{port}"):
            assert client.get("/healthz", headers={"Host": name}).status_code == 200, name
        done = client.post(f"/threads/{thread}/runs/wait", json=RESUME,
                           headers={"Host": f"localhost:{port}"})
        assert done.json()["released"] is True


def test_without_sign_in_a_request_naming_no_host_or_a_crafted_one_is_refused(api_server: str) -> None:
    no_host = _raw(api_server, "GET /healthz HTTP/1.0\r\n\r\n")
    assert no_host.startswith(b"HTTP/1.1 421") and b"names no host" in no_host
    for crafted in ("attacker.example@localhost", "localhost/x", "localhost.", "127.0.0.2"):
        answer = _raw(api_server, f"GET /healthz HTTP/1.1\r\nHost: {crafted}\r\nConnection: close\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 421"), (crafted, answer)
    twice = _raw(api_server, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nHost: attacker.example\r\n"
                             "Connection: close\r\n\r\n")
    assert twice.startswith(b"HTTP/1.1 421"), twice


def test_without_sign_in_a_page_of_another_site_may_not_change_anything(api_server: str) -> None:
    with httpx.Client(base_url=api_server, timeout=60) as client:
        thread = _paused(client)
        before = client.post("/threads/count", json={}).json()
        foreign = {"Origin": f"http://{ELSEWHERE}"}
        refused = client.post("/threads", json={"metadata": {"graph_id": CREDIT}}, headers=foreign)
        problem = _problem(refused, 403)
        assert f"'http://{ELSEWHERE}'" in problem["detail"]
        assert f"--allowed-host {ELSEWHERE}" in problem["hint"]
        _problem(client.post(f"/threads/{thread}/runs/wait", json=RESUME, headers=foreign), 403)
        _problem(client.delete(f"/threads/{thread}", headers=foreign), 403)
        _problem(client.post("/threads", json={}, headers={"Origin": "null"}), 403)  # a sandboxed page
        assert client.post("/threads/count", json={}).json() == before
        assert _status(client, thread) == "paused"
        assert client.get(f"/threads/{thread}", headers=foreign).status_code == 200  # reading changes nothing
        own_page = client.post("/threads", json={"metadata": {"graph_id": CREDIT}},
                               headers={"Origin": "http://localhost:5173"})  # another port: not compared
        assert own_page.status_code == 200, own_page.text


def test_a_websocket_handshake_is_held_to_the_same_hosts_and_origins() -> None:
    app = create_app()

    @app.websocket("/echo")
    async def echo(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_text("hello")
        await websocket.close()

    here, there = "ws://localhost/echo", f"ws://{ELSEWHERE}/echo"  # the host a handshake is sent to
    with TestClient(app) as client:
        with client.websocket_connect(here, headers={"Origin": "http://localhost:3000"}) as ws:
            assert ws.receive_text() == "hello"
        for url, origin in ((here, f"http://{ELSEWHERE}"), (there, None)):
            headers = {"Origin": origin} if origin else {}
            refused_handshake = client.websocket_connect(url, headers=headers)
            with pytest.raises(WebSocketDisconnect) as refused, refused_handshake:
                pass
            assert refused.value.code == 1008, url


@pytest.fixture(params=["flag", "env"])
def listing_server(request: pytest.FixtureRequest, tmp_path: Path,
                   monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A server that lists grapharc.test (and an IPv6 address) as names of its own, by ``--allowed-host``
    or by ``GRAPHARC_ALLOWED_HOSTS``: its announcement."""
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    listed: list[str] = []
    if request.param == "flag":
        listed = ["--allowed-host", "GRAPHARC.test", "--allowed-host", "[fd00::1]"]
    else:
        monkeypatch.setenv("GRAPHARC_ALLOWED_HOSTS", "grapharc.test, fd00::1")
    command = grapharc_serve("--port", "0", "--json", "--sessions", str(tmp_path / "sessions"),
                             "--registry", "api_graphs:register", *listed)
    with ServerProcess(command) as server:
        yield server.json_announcement()


def test_the_operator_lists_further_names_and_origins(listing_server: dict[str, Any]) -> None:
    assert listing_server["sources"]["allowed_hosts"] in ("flag", "env")
    with httpx.Client(base_url=listing_server["url"], timeout=60) as client:
        for name in ("grapharc.test", "grapharc.test:8000", "[fd00::1]:8000", "localhost"):
            assert client.get("/healthz", headers={"Host": name}).status_code == 200, name
        created = client.post("/threads", json={"metadata": {"graph_id": CREDIT}},
                              headers={"Host": "grapharc.test", "Origin": "https://grapharc.test"})
        assert created.status_code == 200, created.text
        problem = _problem(client.get("/healthz", headers={"Host": ELSEWHERE}), 421)
        assert "localhost, 127.0.0.1, [::1], grapharc.test, [fd00::1]" in problem["detail"]


def test_allowed_hosts_goes_through_the_settings_layers_and_a_bad_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "grapharc.toml").write_text('[grapharc]\nallowed_hosts = ["grapharc.internal"]\n')

    def config_show(*env: tuple[str, str]) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "grapharc.cli", "config", "show", "--command", "serve", "--json"]
        return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              env={**_environment(), **dict(env)})

    from_file = json.loads(config_show().stdout)
    row = next(r for r in from_file["settings"] if r["name"] == "allowed_hosts")
    assert (row["value"], row["source"]) == (["grapharc.internal"], "file")
    from_env = json.loads(config_show(("GRAPHARC_ALLOWED_HOSTS", "a.test,b.test")).stdout)
    row = next(r for r in from_env["settings"] if r["name"] == "allowed_hosts")
    assert (row["value"], row["source"]) == (["a.test", "b.test"], "env")
    refused = subprocess.run([*grapharc_serve("--port", "0", "--allowed-host", "http://grapharc.test:8000")],
                             cwd=tmp_path, capture_output=True, text=True, timeout=120, env=_environment())
    assert refused.returncode == 2
    assert "allowed_hosts from command line: must be host names or IP addresses" in refused.stderr
    assert "Traceback" not in refused.stderr


def _environment() -> dict[str, str]:
    """This process's environment without any GRAPHARC_ setting."""
    return {name: value for name, value in os.environ.items() if not name.startswith("GRAPHARC_")}


def test_with_sign_in_the_host_is_free_but_a_page_posts_only_from_the_server_s_own(
        api_server_with_auth: str) -> None:
    port = httpx.URL(api_server_with_auth).port
    with httpx.Client(base_url=api_server_with_auth, timeout=60,
                      headers={"Authorization": f"Bearer {TOKEN}"}) as client:
        assert client.get("/healthz", headers={"Host": "grapharc.example.com"}).status_code == 200
        create = {"metadata": {"graph_id": CREDIT}}
        _problem(client.post("/threads", json=create, headers={"Origin": f"http://{ELSEWHERE}"}), 403)
        same = client.post("/threads", json=create, headers={"Host": "grapharc.example.com",
                                                             "Origin": "https://grapharc.example.com"})
        assert same.status_code == 200, same.text
        assert client.post("/threads", json=create,
                           headers={"Origin": f"http://127.0.0.1:{port}"}).status_code == 200


def test_with_sign_in_an_inbox_form_posted_from_another_site_decides_nothing(tmp_path: Path) -> None:
    with serve_inbox(tmp_path) as served:
        asked = pause_credit_thread(served.sessions, "origin-1")
        where = f"/inbox/approvals/{asked.approval_id}"
        with signed_in(served.url, "alice") as client:
            form = {"decision": "approved", "csrf": csrf_of(client.get(where))}
            forged = client.post(where, data=form, headers={"Origin": f"https://{ELSEWHERE}"})
            assert f"'https://{ELSEWHERE}'" in _problem(forged, 403)["detail"]
            with reading(served.sessions) as manager:
                assert manager.get("origin-1").status == "paused"
            own = client.post(where, data=form, headers={"Origin": served.url})
            assert own.status_code == 303, own.text


def test_the_guard_reads_a_host_header_it_has_answered_before_from_memory(
        monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real_host_of = hosts.host_of

    def counted(header: str) -> str | None:
        parsed.append(header)
        return real_host_of(header)

    monkeypatch.setattr(hosts, "host_of", counted)
    statuses: list[int] = []

    async def served(scope: Any, receive: Any, send: Any) -> None:
        statuses.append(200)

    async def refused(message: Any) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def nothing() -> Any:
        return {"type": "http.request", "body": b"", "more_body": False}

    guard = hosts.HostGuard(served)
    for sent in ("127.0.0.1:8123", "127.0.0.1:8123", "rebound.example", "127.0.0.1:8123", "rebound.example"):
        scope = {"type": "http", "method": "POST", "path": "/threads", "headers": [(b"host", sent.encode())]}
        asyncio.run(guard(scope, nothing, refused))
    assert statuses == [200, 200, 421, 200, 421]
    # each request parsed its Host (about 10 thousand instructions of the guard's 23); a refusal
    # still parses it again for its hint
    assert parsed.count("127.0.0.1:8123") == 1 and parsed.count("rebound.example") == 3
