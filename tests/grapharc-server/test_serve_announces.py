"""``grapharc serve`` binds first, then says where it listens: the real port, once requests are accepted."""

from __future__ import annotations

import json
import re
import signal
import socket

import httpx
from server_process import ServerProcess, grapharc_serve, needs_ipv6

from grapharc.stores.uris import known_schemes


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return probe.getsockname()[1]


def test_json_reports_the_port_actually_bound_when_asked_for_port_0():
    with ServerProcess(grapharc_serve("--port", "0", "--json")) as server:
        announced = server.json_announcement()
        port = announced["port"]
        assert port != 0
        where = {key: announced.pop(key) for key in ("sessions", "store", "config", "sources")}
        assert announced == {"ok": True, "url": f"http://127.0.0.1:{port}", "host": "127.0.0.1",
                             "port": port, "pid": server.process.pid, "event_loop": "uvloop",
                             "http": "httptools"}  # dependencies on Linux: C event loop and parser
        assert where["sessions"].endswith("/.grapharc/sessions")  # serve's built-in, named as a layer
        assert where["sources"]["sessions"] == "default" and where["config"]["path"] is None
        durable = "items" in known_schemes().get("sqlite", ())  # with grapharc-memory-sqlite's item store
        assert where["store"] == (f"sqlite:{where['sessions']}/store.db" if durable else "memory:")
        announced.update(where)
        assert httpx.get(announced["url"] + "/healthz").json()["ok"] is True
        server.send(signal.SIGTERM)
        assert server.wait() == 0
    assert json.loads(server.stdout) == announced  # the announcement is the one document on stdout


def test_serving_on_is_said_on_stderr_once_the_server_answers_and_stdout_stays_empty():
    port = free_port()
    with ServerProcess(grapharc_serve("--port", str(port))) as server:
        line = server.stderr_line_containing("serving on")
        assert re.search(rf"serving on http://127\.0\.0\.1:{port} \(pid \d+, uvloop and httptools;", line)
        assert httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
        server.send(signal.SIGTERM)
        assert server.wait() == 0
    assert server.stdout == ""


def test_a_port_0_in_human_mode_says_the_port_it_got():
    with ServerProcess(grapharc_serve("--port", "0")) as server:
        line = server.stderr_line_containing("serving on")
        url = re.search(r"serving on (http://127\.0\.0\.1:(\d+))", line)
        assert url is not None and url.group(2) != "0"
        assert httpx.get(url.group(1) + "/healthz").status_code == 200
        server.send(signal.SIGTERM)
        assert server.wait() == 0


@needs_ipv6
def test_an_ipv6_address_is_announced_in_brackets():
    with ServerProcess(grapharc_serve("--host", "::1", "--port", "0", "--json")) as server:
        announced = server.json_announcement()
        assert announced["host"] == "::1" and announced["url"] == f"http://[::1]:{announced['port']}"
        assert httpx.get(announced["url"] + "/healthz").status_code == 200
        server.send(signal.SIGTERM)
        assert server.wait() == 0
