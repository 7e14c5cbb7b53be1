"""Through the official ``langgraph-sdk`` client, on one real ``grapharc serve`` for the module: a
thread's own metadata (kept, merged, searched by containment, by ids and by state values, sorted;
GraphARC's keys read-only, size bounded), ``/info``, an assistant's subgraphs, a batch of runs,
cancelling and deleting runs, a thread's stream of its runs, and runs put off with ``after_seconds``
(the stories of metadata and delays are thread_metadata_stories.py's, which PostgreSQL's tests drive
across two workers)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import httpx
import pytest
from langgraph_sdk import get_client
from nested_graphs import NESTED
from thread_metadata_stories import (
    CREDIT,
    RELAY,
    RELEASED,
    WAITER,
    delay_a_run_with_after_seconds,
    keep_merge_search_and_sort_metadata,
    refuse_graphs_keys_and_oversized_metadata,
    refused,
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One server for the module, with api_graphs.py's graphs and nested_graphs.py's."""
    from server_process import serving

    sessions = tmp_path_factory.mktemp("threads-and-bulk") / "sessions"
    with serving(sessions, "--registry", "api_graphs:register",
                 "--registry", "nested_graphs:register") as running:
        yield running.json_announcement()["url"]


def story(server: str, tell: Any) -> Any:
    """What ``tell`` (a coroutine function of an SDK client) returns, told to ``server``."""
    return asyncio.run(tell(get_client(url=server)))


def test_a_thread_keeps_merges_and_is_found_and_sorted_by_its_own_metadata(server: str) -> None:
    story(server, keep_merge_search_and_sort_metadata)


def test_grapharcs_own_metadata_keys_are_read_only_and_metadata_is_bounded(server: str) -> None:
    story(server, refuse_graphs_keys_and_oversized_metadata)


def test_a_run_put_off_with_after_seconds_is_not_claimed_before_its_time(server: str) -> None:
    story(server, delay_a_run_with_after_seconds)


def test_info_says_what_the_server_offers_as_langgraphs_server_does(server: str) -> None:
    async def tell(client: Any) -> None:
        info = await client.http.get("/info")
        assert info["flags"] == {"assistants": True, "crons": True, "langsmith": False}
        assert info["version"] and info["langgraph_py_version"].startswith("1.")
        assert info["host"]["kind"] == "self-hosted"

    story(server, tell)


def test_an_assistants_subgraphs_are_listed_by_namespace_and_recursively(server: str) -> None:
    async def tell(client: Any) -> None:
        top = await client.assistants.get_subgraphs(NESTED)
        assert list(top) == ["middle"]
        assert top["middle"]["input_schema"]["properties"]["word"]["type"] == "string"
        assert list(await client.assistants.get_subgraphs(NESTED, recurse=True)) == ["middle", "middle|inner"]
        assert list(await client.assistants.get_subgraphs(NESTED, namespace="middle")) == ["middle"]
        assert await client.assistants.get_subgraphs(NESTED, namespace="elsewhere") == {}
        assert await client.assistants.get_subgraphs(RELAY) == {}
        await refused(client.assistants.get_subgraphs("no-such-graph"), 404)

    story(server, tell)


def test_a_batch_of_runs_is_queued_whole_or_refused_whole(server: str) -> None:
    async def tell(client: Any) -> None:
        runs = await client.runs.create_batch([
            {"assistant_id": CREDIT, "input": {"application_id": "LN-2204"}, "on_completion": "keep"},
            {"assistant_id": NESTED, "input": {"word": "hey"}, "on_completion": "keep"}])
        assert len({run["thread_id"] for run in runs}) == 2
        assert (await client.runs.join(runs[0]["thread_id"], runs[0]["run_id"]))["released"] is True
        assert (await client.runs.join(runs[1]["thread_id"], runs[1]["run_id"]))["word"] == "HEY!"

        before = await client.threads.count()
        problem = await refused(client.runs.create_batch([
            {"assistant_id": NESTED, "input": {"word": "fine"}},
            {"assistant_id": NESTED, "input": {"word": 7}}]))
        assert problem["errors"][0]["loc"] == ["input", "word"]
        await refused(client.runs.create_batch([{"assistant_id": "no-such-graph"}]), 404)
        await refused(client.runs.create_batch([]))
        assert await client.threads.count() == before  # nothing of a refused batch was kept

    story(server, tell)


def test_runs_are_cancelled_many_at_once_by_ids_or_by_status(server: str, tmp_path: Path) -> None:
    release = tmp_path / "release"

    async def tell(client: Any) -> None:
        thread = (await client.threads.create(graph_id=WAITER))["thread_id"]
        running = await client.runs.create(thread, WAITER, input={"release_file": str(release)})
        queued = [await client.runs.create(thread, WAITER, input={"release_file": str(release)},
                                           multitask_strategy="enqueue") for _ in range(3)]
        await client.runs.cancel_many(thread_id=thread, run_ids=[queued[0]["run_id"]])
        assert (await client.runs.get(thread, queued[0]["run_id"]))["status"] == "interrupted"
        await client.runs.cancel_many(thread_id=thread, status="pending")
        statuses = [(await client.runs.get(thread, run["run_id"]))["status"] for run in queued]
        assert statuses == ["interrupted"] * 3
        await refused(client.runs.cancel_many(thread_id=thread, run_ids=["no-such-run"]), 404)
        await refused(client.runs.cancel_many(run_ids=[running["run_id"]]))  # which thread?
        undone = await client.runs.create(thread, WAITER, input={"release_file": str(release)},
                                          multitask_strategy="enqueue")
        await client.runs.cancel_many(thread_id=thread, run_ids=[undone["run_id"]], action="rollback")
        await refused(client.runs.get(thread, undone["run_id"]), 404)  # rolled back: deleted
        assert (await client.runs.get(thread, running["run_id"]))["status"] in ("pending", "running")

        await client.runs.cancel_many(status="all")
        await client.runs.join(thread, running["run_id"])
        assert (await client.runs.get(thread, running["run_id"]))["status"] == "interrupted"
        release.touch()  # the node's thread waits on the file: let it end

    story(server, tell)


def test_an_ended_run_is_deleted_and_the_trace_keeps_it_but_a_live_one_is_not(
        server: str, tmp_path: Path) -> None:
    release = tmp_path / "release"

    async def tell(client: Any) -> str:
        thread = (await client.threads.create(graph_id=WAITER))["thread_id"]
        done = await client.runs.create(thread, WAITER, input={"release_file": RELEASED})
        await client.runs.join(thread, done["run_id"])
        live = await client.runs.create(thread, WAITER, input={"release_file": str(release)})
        problem = await refused(client.runs.delete(thread, live["run_id"]), 409)
        assert "only an ended run can be deleted" in problem["detail"]

        await client.runs.delete(thread, done["run_id"])
        await refused(client.runs.get(thread, done["run_id"]), 404)
        await refused(client.runs.delete(thread, done["run_id"]), 404)
        assert [run["run_id"] for run in await client.runs.list(thread)] == [live["run_id"]]
        release.touch()
        await client.runs.join(thread, live["run_id"])
        return thread

    thread = story(server, tell)
    with httpx.Client(base_url=server, timeout=30) as http:
        trace = http.get(f"/threads/{thread}/trace").text.splitlines()
    assert len([line for line in trace if '"kind": "run"' in line]) == 2  # the audit trail keeps both runs


def test_a_threads_stream_sends_its_runs_as_they_come(server: str, tmp_path: Path) -> None:
    release = tmp_path / "release"

    async def tell(client: Any) -> None:
        thread = (await client.threads.create(graph_id=RELAY))["thread_id"]
        ended = await client.runs.wait(thread, RELAY, input={"release_file": RELEASED})  # before the join
        assert ended["released"] is True
        first = await client.runs.create(thread, RELAY, input={"release_file": str(release)},
                                         stream_mode=["updates"])
        parts: list[Any] = []
        stream = await client.threads.join_stream(thread, stream_mode=["run_modes", "state_update"])
        async for part in stream:
            parts.append(part)
            if part.event == "updates" and "first_leg" in part.data:
                release.touch()
            if part.event == "run_done" and part.data["run_id"] == first["run_id"]:
                second = await client.runs.create(thread, RELAY, input={"release_file": RELEASED})
            elif part.event == "run_done":
                break
        await stream.aclose()
        runs = [p.data["run_id"] for p in parts if p.event == "metadata"]
        assert runs == [first["run_id"], second["run_id"]]  # the run ended before the join is not sent
        assert [p.data for p in parts if p.event == "run_done"] == [
            {"run_id": first["run_id"], "status": "success", "thread_id": thread},
            {"run_id": second["run_id"], "status": "success", "thread_id": thread}]
        updates = [next(iter(p.data)) for p in parts if p.event == "updates"]
        assert updates == ["first_leg", "middle_leg", "last_leg"]  # the first run's own mode
        values = [p.data["legs"] for p in parts if p.event == "values"]
        relay = ["first", "middle", "last"]  # a run's legs, added to those of the runs before it
        assert values[:2] == [relay, [*relay, "first"]]  # the input applied first, as LangGraph sends it
        assert values[-1] == relay * 3

        lifecycle = []
        third = await client.runs.create(thread, RELAY, input={"release_file": str(tmp_path / "third")})
        stream = await client.threads.join_stream(thread, stream_mode="lifecycle")
        async for part in stream:
            lifecycle.append((part.event, part.data["run_id"]))
            if part.event == "metadata":
                (tmp_path / "third").touch()
            if part.event == "run_done":
                break
        await stream.aclose()
        assert lifecycle == [("metadata", third["run_id"]), ("run_done", third["run_id"])]
        await refused(_first(client.threads.join_stream(thread, stream_mode="everything")))
        await refused(_first(client.threads.join_stream("no-such-thread")), 404)

    story(server, tell)


def test_a_threads_stream_ends_when_the_thread_is_deleted(server: str) -> None:
    async def tell(client: Any) -> list[tuple[str, str]]:
        thread = (await client.threads.create(graph_id=RELAY))["thread_id"]
        later = await client.runs.create(thread, RELAY, input={"release_file": RELEASED}, after_seconds=3600)
        seen = []
        async for part in await client.threads.join_stream(thread, stream_mode="lifecycle"):
            seen.append((part.event, part.data["status" if part.event == "run_done" else "run_id"]))
            if part.event == "metadata":  # the stream is open: end the run, then the thread
                await client.runs.cancel(thread, later["run_id"])
                await client.threads.delete(thread)
        return seen

    assert story(server, tell) == [("metadata", ANY), ("run_done", "interrupted")]


async def _first(joining: Any) -> Any:
    """The first part of the thread stream ``joining`` (the SDK's ``join_stream`` coroutine) opens."""
    stream = await joining
    try:
        async for part in stream:
            return part
        return None
    finally:
        await stream.aclose()
