"""``grapharc serve --threads``: the pool that sync nodes run in, sized by the operator rather than
by Python's default (six threads on a two-core machine); store calls have a pool of their own."""

from __future__ import annotations

import queue
import threading
from pathlib import Path

import httpx
from api_graphs import MEETING, RELAY
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


def test_a_stream_sends_what_a_run_recorded_while_the_only_node_thread_is_busy(api_server_one_thread: str,
                                                                                tmp_path: Path) -> None:
    """The relay's middle node holds the server's one node thread until released; the audit write
    of the first leg and the stream's trace read run in the store pool, so the client sees the
    first leg while the middle one still waits (in a shared pool both queued behind the node)."""
    release = tmp_path / "release"
    with httpx.Client(base_url=api_server_one_thread, timeout=60) as client:
        thread = client.post("/threads", json={"metadata": {"graph_id": RELAY}}).json()["thread_id"]
    lines: queue.Queue[str] = queue.Queue()

    def stream() -> None:
        with httpx.stream("POST", f"{api_server_one_thread}/threads/{thread}/runs/stream", timeout=60,
                          json={"assistant_id": RELAY, "input": {"release_file": str(release)},
                                "stream_mode": ["updates"]}) as response:
            for line in response.iter_lines():
                lines.put(line)

    streamer = threading.Thread(target=stream, daemon=True)  # a hung stream cannot hang the test
    streamer.start()
    try:
        line = ""
        while "first_leg" not in line:
            line = lines.get(timeout=20)  # raises queue.Empty if the first leg never comes
        assert not release.exists()
    finally:
        release.touch()
    streamer.join(timeout=60)
    assert not streamer.is_alive(), "the run's stream did not end after the release"
    sent = []
    while not lines.empty():
        sent.append(lines.get())
    assert any("middle_leg" in line for line in sent) and any("last_leg" in line for line in sent)
