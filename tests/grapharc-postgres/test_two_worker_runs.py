"""Runs on two ``grapharc serve`` workers over one PostgreSQL database: a run id from one is read,
joined and streamed through the other; the ``langgraph-sdk`` contract stories (a thread's state
edited, forked and copied among them) pass with every call alternating between them; a worker
SIGKILLed mid-run has its run taken over by the other, which completes it from the last
checkpoint."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client

from grapharc.stores import open_store

SERVER_TESTS = Path(__file__).resolve().parents[1] / "grapharc-server"
sys.path.insert(0, str(SERVER_TESTS))

from sdk_stories import (  # noqa: E402
    Alternating,
    edit_fork_and_copy,
    join_one_run_and_cancel_another,
    list_a_threads_runs,
    stream_to_interrupt_and_resume,
)
from server_process import ServerProcess, grapharc_serve  # noqa: E402

CREDIT = "credit-approval"
LEASE_SECONDS = "2"  # a dead worker's runs are taken over this long after its last renewal


@pytest.fixture
def workers(postgres_uri: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, ServerProcess]]]:
    """Two workers on this test's database, each as (url, process), serving api_graphs.py's graphs."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(SERVER_TESTS), os.environ.get("PYTHONPATH", "")]))
    with ExitStack() as stack:
        started = [stack.enter_context(ServerProcess(grapharc_serve(
            "--port", "0", "--json", "--sessions", postgres_uri, "--registry", "api_graphs:register",
            "--lease", LEASE_SECONDS))) for _ in range(2)]
        yield [(server.json_announcement()["url"], server) for server in started]


def test_a_run_id_from_one_worker_is_read_joined_and_streamed_through_the_other(workers) -> None:
    (url_a, _), (url_b, _) = workers
    with httpx.Client(timeout=60) as http:
        thread = http.post(f"{url_a}/threads", json={"metadata": {"graph_id": CREDIT}}).json()["thread_id"]
        run = http.post(f"{url_a}/threads/{thread}/runs", json={
            "assistant_id": CREDIT, "input": {"application_id": "LN-2204"}}).json()["run_id"]
        joined = http.get(f"{url_b}/threads/{thread}/runs/{run}/join")
        assert joined.status_code == 200 and joined.json()["released"] is True
        seen = http.get(f"{url_b}/threads/{thread}/runs/{run}").json()
        assert seen["status"] == "success"
        stream = http.get(f"{url_b}/threads/{thread}/runs/{run}/stream",
                          params={"stream_mode": "updates"}).text
        assert '"disburse"' in stream and "event: end" in stream


def test_the_sdk_contract_holds_with_calls_alternating_between_two_workers(
        workers, postgres_uri: str, tmp_path: Path) -> None:
    async def stories() -> str:
        client = Alternating(*(get_client(url=url) for url, _ in workers))
        await stream_to_interrupt_and_resume(client)
        await join_one_run_and_cancel_another(client, tmp_path)
        await list_a_threads_runs(client)
        return (await edit_fork_and_copy(client))[1]

    copied = asyncio.run(stories())
    store = open_store(postgres_uri, kind="sessions")
    try:
        assert [e.kind for e in store.audit(copied)] == ["copied"]
    finally:
        store.close()


def test_a_run_whose_worker_is_killed_is_completed_by_the_other_from_its_checkpoint(
        workers, postgres_uri: str, tmp_path: Path) -> None:
    release = tmp_path / "release"
    by_pid = {server.process.pid: (url, server) for url, server in workers}
    url_a = workers[0][0]
    with httpx.Client(timeout=60) as http:
        thread = http.post(f"{url_a}/threads", json={"metadata": {"graph_id": "relay"}}).json()["thread_id"]
        run = http.post(f"{url_a}/threads/{thread}/runs", json={
            "assistant_id": "relay", "input": {"release_file": str(release)},
            "budget": {"max_iterations": 10}}).json()["run_id"]
        store = open_store(postgres_uri, kind="sessions")
        try:
            while not any(e.node == "first_leg" for e in store.audit(thread) if e.kind == "node"):
                time.sleep(0.1)  # until the first leg is saved: the middle leg then waits for the file
        finally:
            store.close()
        worker = http.get(f"{url_a}/threads/{thread}/runs/{run}").json()["metadata"]["grapharc"]["worker"]
        pid = int(worker.split(":")[1])
        _, killed = by_pid[pid]
        killed.send(signal.SIGKILL)
        killed.wait()
        release.touch()
        (survivor_url, _), = [(url, server) for p, (url, server) in by_pid.items() if p != pid]
        joined = http.get(f"{survivor_url}/threads/{thread}/runs/{run}/join")
        assert joined.status_code == 200, joined.text
        assert joined.json()["legs"] == ["first", "middle", "last"]
        record = http.get(f"{survivor_url}/threads/{thread}/runs/{run}").json()
    assert record["status"] == "success"
    taken_over = record["metadata"]["grapharc"]
    assert taken_over["attempts"] == 2 and taken_over["worker"] != worker
    store = open_store(postgres_uri, kind="sessions")
    try:
        trail = store.audit(thread)
    finally:
        store.close()
    assert [e.node for e in trail if e.kind == "node"] == ["first_leg", "middle_leg", "last_leg"]
    assert [e.kind for e in trail if e.kind in ("claimed", "reclaimed", "completed")] == [
        "claimed", "reclaimed", "completed"]
