"""Runs on two ``grapharc serve`` workers over one PostgreSQL database: a run id from one is read,
joined and streamed through the other; the ``langgraph-sdk`` contract stories (a thread's state
edited, forked and copied among them) pass with every call alternating between them; a chat run's
tokens stream through both, whichever executes it (its live log is durable); a worker SIGKILLed
mid-run has its run taken over by the other, which completes it from the last checkpoint."""

from __future__ import annotations

import asyncio
import json
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

from api_graphs import CHAT, CHAT_ANSWER, SECOND_ANSWER  # noqa: E402
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
SERVED_PATH = os.pathsep.join([str(SERVER_TESTS), os.environ.get("PYTHONPATH", "")])


Workers = list[tuple[str, ServerProcess]]


def started_workers(uri: str, stack: ExitStack) -> Workers:
    """Two workers on the database at ``uri``, each as (url, process), serving api_graphs.py's
    graphs; stopped when ``stack`` closes."""
    started = [stack.enter_context(ServerProcess(grapharc_serve(
        "--port", "0", "--json", "--sessions", uri, "--registry", "api_graphs:register",
        "--lease", LEASE_SECONDS))) for _ in range(2)]
    return [(server.json_announcement()["url"], server) for server in started]


@pytest.fixture(scope="module")
def shared(module_postgres_uri: str) -> Iterator[tuple[str, Workers]]:
    """(database URI, two workers on it) for the module's tests that only read their own threads
    and stop no worker."""
    with pytest.MonkeyPatch.context() as patch, ExitStack() as stack:
        patch.setenv("PYTHONPATH", SERVED_PATH)
        yield module_postgres_uri, started_workers(module_postgres_uri, stack)


@pytest.fixture
def workers(postgres_uri: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workers]:
    """Two workers on this test's own database, for a test that kills one."""
    monkeypatch.setenv("PYTHONPATH", SERVED_PATH)
    with ExitStack() as stack:
        yield started_workers(postgres_uri, stack)


def test_a_run_id_from_one_worker_is_read_joined_and_streamed_through_the_other(shared) -> None:
    (url_a, _), (url_b, _) = shared[1]
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


def test_a_chat_runs_tokens_stream_through_both_workers_whichever_executes_it(
        shared: tuple[str, Workers], tmp_path: Path) -> None:
    release = tmp_path / "release"

    async def tokens(url: str, thread: str, run: str, modes: list[str]) -> str:
        said = []
        joined = get_client(url=url).runs.join_stream(thread, run, stream_mode=modes)  # type: ignore[arg-type]
        async for part in joined:
            if part.event == "messages":
                said.append(part.data[0]["content"])
                if "".join(said) == CHAT_ANSWER:
                    release.touch()  # the first answer has come through: let the node ask again
        return "".join(said)

    async def story() -> list[str]:
        (url_a, _), (url_b, _) = shared[1]
        client = get_client(url=url_a)
        thread = (await client.threads.create(graph_id=CHAT))["thread_id"]
        modes = ["messages-tuple"]
        run = (await client.runs.create(thread, CHAT, input={"question": "hi", "release_file": str(release)},
                                        stream_mode=modes))["run_id"]  # type: ignore[arg-type]
        return list(await asyncio.gather(*(tokens(url, thread, run, modes) for url in (url_a, url_b))))

    assert asyncio.run(story()) == [CHAT_ANSWER + SECOND_ANSWER] * 2


def test_the_sdk_contract_holds_with_calls_alternating_between_two_workers(shared, tmp_path: Path) -> None:
    postgres_uri, workers = shared

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
        newest = http.get(f"{survivor_url}/threads/{thread}/state").json()
        with http.stream("GET", f"{survivor_url}/threads/{thread}/runs/{run}/stream") as streamed:
            first = next(line for line in streamed.iter_lines() if line.startswith("data:"))
    assert record["status"] == "success"
    taken_over = record["metadata"]["grapharc"]
    assert taken_over["attempts"] == 2 and taken_over["worker"] != worker
    assert json.loads(first.removeprefix("data:"))["attempt"] == 2  # the stream's metadata event
    assert newest["metadata"]["run_attempt"] == 2  # the checkpoints the survivor wrote
    store = open_store(postgres_uri, kind="sessions")
    try:
        trail = store.audit(thread)
    finally:
        store.close()
    assert [e.node for e in trail if e.kind == "node"] == ["first_leg", "middle_leg", "last_leg"]
    assert [e.kind for e in trail if e.kind in ("claimed", "reclaimed", "completed")] == [
        "claimed", "reclaimed", "completed"]


def test_a_run_rolled_back_through_the_other_worker_leaves_no_checkpoint_and_the_next_run_works(
        shared, tmp_path: Path) -> None:
    release = tmp_path / "release"
    (url_a, _), (url_b, _) = shared[1]

    async def story() -> None:
        client_a, client_b = get_client(url=url_a), get_client(url=url_b)
        thread = (await client_a.threads.create(graph_id="relay"))["thread_id"]
        run = await client_a.runs.create(thread, "relay", input={"release_file": str(release)})
        async for part in client_a.runs.join_stream(thread, run["run_id"], stream_mode="updates"):
            if part.event == "updates" and "first_leg" in part.data:
                break  # the middle leg waits for the file now
        await client_b.runs.cancel(thread, run["run_id"], wait=True, action="rollback")
        release.touch()
        assert await client_b.runs.list(thread) == []
        assert await client_b.threads.get_history(thread) == []  # the run wrote every checkpoint
        assert (await client_b.threads.get(thread))["status"] == "idle"
        second = await client_b.runs.create(thread, "relay", input={"release_file": str(release)},
                                            multitask_strategy="interrupt")
        assert (await client_a.runs.join(thread, second["run_id"]))["legs"] == ["first", "middle", "last"]

    asyncio.run(story())
