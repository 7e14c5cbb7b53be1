"""``grapharc serve --threads``: the pool that sync nodes and store calls run in, sized by the
operator rather than by Python's default (six threads on a two-core machine)."""

from __future__ import annotations

from pathlib import Path

import httpx
from api_graphs import MEETING
from server_process import ServerProcess, grapharc_serve

RUNS_AT_ONCE = 10  # more than Python's default pool holds on a machine with up to 2 cores (min(32, cpus + 4))


def test_the_server_runs_more_sleeping_nodes_at_once_than_pythons_default_pool(api_server: str,
                                                                               tmp_path: Path) -> None:
    room = tmp_path / "room"
    room.mkdir()
    body = {"assistant_id": MEETING, "input": {"room": str(room), "expected": RUNS_AT_ONCE}}
    with httpx.Client(base_url=api_server, timeout=120) as client:
        runs = []
        for _ in range(RUNS_AT_ONCE):
            thread = client.post("/threads", json={"metadata": {"graph_id": MEETING}}).json()["thread_id"]
            run = client.post(f"/threads/{thread}/runs", json=body)
            assert run.status_code == 200, run.text
            runs.append((thread, run.json()["run_id"]))
        met = [client.get(f"/threads/{thread}/runs/{run}/join").json()["met"] for thread, run in runs]
    assert met == [True] * RUNS_AT_ONCE  # every node held a thread while all the others did


def test_threads_out_of_range_is_refused_naming_the_option(tmp_path: Path) -> None:
    with ServerProcess(grapharc_serve("--port", "0", "--threads", "0", "--sessions",
                                      str(tmp_path / "sessions"))) as server:
        assert server.wait() == 2
    assert "--threads" in server.stderr and "from 1 to 4096" in server.stderr
    assert "Traceback" not in server.stderr
