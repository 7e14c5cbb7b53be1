"""Two ``grapharc serve`` workers, two processes on two ports, one PostgreSQL database: a thread
created and paused through one is listed, resumed and finished through the other."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx

from grapharc.stores import open_store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grapharc-server"))

from server_process import ServerProcess, grapharc_serve

REGISTRY = "grapharc.examples.approval:register_credit_graph"
CREDIT = "credit-approval"


def worker(uri: str) -> ServerProcess:
    return ServerProcess(grapharc_serve("--port", "0", "--json", "--sessions", uri, "--registry", REGISTRY))


def test_a_thread_paused_through_one_worker_is_resumed_through_the_other(postgres_uri):
    with worker(postgres_uri) as a, worker(postgres_uri) as b:
        url_a, url_b = a.json_announcement()["url"], b.json_announcement()["url"]
        with httpx.Client(timeout=60) as http:
            thread = http.post(f"{url_a}/threads", json={}).json()["thread_id"]
            paused = http.post(f"{url_a}/threads/{thread}/runs/wait",
                               json={"assistant_id": CREDIT, "input": {"application_id": "LN-7310"}})
            assert paused.status_code == 200, paused.text
            seen = http.get(f"{url_b}/threads/{thread}").json()
            assert seen["status"] == "interrupted", seen

            done = http.post(f"{url_b}/threads/{thread}/runs/wait", json={
                "assistant_id": CREDIT, "command": {"resume": {"decision": "approved",
                                                               "decider": "credit-desk"}}})
            assert done.status_code == 200, done.text
            assert done.json()["released"] is True
            final = http.get(f"{url_a}/threads/{thread}").json()
            assert final["status"] == "idle" and final["metadata"]["grapharc_status"] == "completed"
    store = open_store(postgres_uri, kind="sessions")
    try:
        runners = [e.detail["runner"] for e in store.audit(thread) if e.kind == "claimed"]
    finally:
        store.close()
    assert len(runners) == 2 and runners[0] != runners[1]  # each worker ran one turn
