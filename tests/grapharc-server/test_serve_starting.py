"""While ``grapharc serve`` loads its graphs it already answers on its port, honestly: ``/healthz``
says the process is up but not ready, ``/readyz`` and every API route answer 503 with a problem
document; once it has announced itself, ``/healthz`` says ready, ``/readyz`` answers 200 and the API
serves. The test's registry holds the loading until the test releases it (no timing asserted)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from server_process import PATIENCE_SECONDS, ServerProcess, grapharc_serve

REGISTRY = '''
import os
import time
from pathlib import Path

from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState


class Count(GraphARCState):
    count: int = 0


def bump(state: Count) -> dict[str, int]:
    return {"count": state.count + 1}


def register(manager):
    while not Path(os.environ["GRAPHARC_TEST_RELEASE"]).exists():  # held until the test releases it
        time.sleep(0.01)
    graph = GraphARC(Count, name="counter")
    graph.add_node("bump", bump, writes={"count"})
    graph.add_edge(START, "bump")
    graph.add_edge("bump", END)
    manager.register(graph)
'''


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return probe.getsockname()[1]


def first_answer(server: ServerProcess, client: httpx.Client, path: str) -> httpx.Response:
    """The first answer to GET ``path``: the port is bound early in the start, so retry until then
    (giving up after PATIENCE_SECONDS: a server that binds only once loaded never answers here)."""
    give_up = time.monotonic() + PATIENCE_SECONDS
    while time.monotonic() < give_up:
        assert server.process.poll() is None, server.stderr
        try:
            return client.get(path)
        except httpx.ConnectError:
            continue
    pytest.fail(f"nothing answered {path} while the graphs were loading")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_health_answers_not_ready_while_graphs_load_and_ready_once_announced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: str) -> None:
    (tmp_path / "held_graphs.py").write_text(REGISTRY)
    release = tmp_path / "release"
    search_path = [str(tmp_path), os.environ.get("PYTHONPATH")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, search_path)))
    monkeypatch.setenv("GRAPHARC_TEST_RELEASE", str(release))
    port = free_port()
    command = grapharc_serve("--port", str(port), "--json", "--sessions", str(tmp_path / "sessions"),
                             "--registry", "held_graphs:register", "--workers", workers)
    with ServerProcess(command) as server, httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
        live = first_answer(server, client, "/healthz")
        assert (live.status_code, live.json()) == (200, {"ok": True, "ready": False})
        for answer in (client.get("/readyz"), client.post("/threads", json={})):
            assert answer.status_code == 503
            assert answer.headers["content-type"] == "application/problem+json"
            assert answer.headers["retry-after"] == "1"
            assert answer.json()["detail"] == "the server is starting: it is loading its graphs and stores"

        release.touch()  # loading goes on
        assert server.json_announcement()["port"] == port
        assert client.get("/healthz").json()["ready"] is True
        assert client.get("/readyz").json() == {"ok": True, "ready": True}
        assert client.post("/threads", json={}).status_code == 200
        server.send(signal.SIGTERM)
        assert server.wait() == 0


BOUND_REPORT = '''
import json, os, socket, sys

def report_and_stop(*args, **kwargs):  # the moment serve binds its address: what it has imported
    print(json.dumps(sorted(sys.modules)), flush=True)
    os._exit(0)

socket.create_server = report_and_stop
from grapharc.cli.main import main
sys.argv = ["grapharc", "serve", "--port", "0", "--sessions", sys.argv[1], "--webhook-allow", "10.0.0.0/8"]
main()
'''


def test_serve_binds_before_importing_the_http_stack(tmp_path: Path) -> None:
    """What runs before the bind is what ``/healthz`` waits for: the webhook rule read there must not
    bring in httpx (nor the rich it imports), nor anything else of the HTTP stack; with no policy
    named, nor the governed loop (its policy engine)."""
    done = subprocess.run([sys.executable, "-c", BOUND_REPORT, str(tmp_path / "sessions")],
                          capture_output=True, text=True, timeout=PATIENCE_SECONDS)
    assert done.returncode == 0, done.stderr
    imported = set(json.loads(done.stdout))
    assert {"grapharc.server.cli", "grapharc.server.webhooks.egress"} <= imported  # the rule was read
    assert not {"httpx", "rich", "fastapi", "uvicorn", "grapharc.governed.run"} & imported
