"""Stories of a thread's own metadata and of delayed runs through ``langgraph-sdk``, driven by one
client or ``Alternating`` between the workers on one PostgreSQL database (tests/grapharc-postgres).

Each story tags its threads with a fresh ``story`` key, so it finds only its own among every
thread of the server."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk.errors import APIStatusError

RELAY = "relay"
WAITER = "waiter"
CREDIT = "credit-approval"
RELEASED = str(Path(__file__))  # a file that exists: a relay or waiter run goes straight through


async def refused(call: Any, status: int = 422) -> dict[str, Any]:
    """The problem document ``call`` (an SDK coroutine) is refused with, once it is sure to be ``status``."""
    with pytest.raises(APIStatusError) as answer:
        await call
    assert answer.value.response.status_code == status, answer.value.response.text
    problem: dict[str, Any] = answer.value.response.json()
    return problem


async def keep_merge_search_and_sort_metadata(client: Any) -> None:
    """Threads keep any JSON metadata beside GraphARC's keys; an update merges key by key; a search
    matches metadata by containment, picks threads by id and by state values, and sorts."""
    story = uuid.uuid4().hex
    first = await client.threads.create(graph_id=RELAY, metadata={
        "story": story, "user": {"id": "u-1", "roles": ["reader", "writer"]}, "team": "x", "rank": 1})
    assert first["metadata"] == {"story": story, "user": {"id": "u-1", "roles": ["reader", "writer"]},
                                 "team": "x", "rank": 1, "graph_id": RELAY, "grapharc_status": "created",
                                 "outcome": None}
    second = await client.threads.create(graph_id=RELAY, metadata={"story": story, "team": "y", "rank": 2})
    third = await client.threads.create(graph_id=RELAY, metadata={"story": story, "team": "x", "rank": 3})
    ids = [t["thread_id"] for t in (first, second, third)]

    updated = await client.threads.update(ids[0], metadata={"team": "z", "user": {"id": "u-2"}, "vip": True})
    assert updated["metadata"]["team"] == "z" and updated["metadata"]["user"] == {"id": "u-2"}
    assert updated["metadata"]["vip"] is True and updated["metadata"]["rank"] == 1  # merged, not replaced
    assert (await client.threads.get(ids[0]))["metadata"] == updated["metadata"]
    assert await client.threads.update(ids[1], metadata={"rank": 20}, return_minimal=True) is None

    mine = {"story": story}
    assert [t["thread_id"] for t in await client.threads.search(metadata={**mine, "team": "x"})] == [ids[2]]
    assert await client.threads.count(metadata={**mine, "user": {"id": "u-2"}}) == 1  # nested containment
    assert await client.threads.count(metadata={**mine, "user": {"id": "u-1"}}) == 0  # replaced by the update
    by_rank = await client.threads.search(metadata=mine, sort_by="created_at", sort_order="asc")
    assert [t["thread_id"] for t in by_rank] == ids
    newest_first = await client.threads.search(metadata=mine, sort_by="created_at")
    assert [t["thread_id"] for t in newest_first] == ids[::-1]
    by_id = await client.threads.search(ids=[ids[2], ids[0], "no-such-thread"], sort_by="thread_id",
                                        sort_order="asc")
    assert [t["thread_id"] for t in by_id] == sorted([ids[0], ids[2]])
    assert [t["thread_id"] for t in await client.threads.search(ids=[ids[1]])] == [ids[1]]

    await client.runs.wait(ids[1], RELAY, input={"release_file": RELEASED})
    matched = await client.threads.search(metadata=mine, values={"legs": ["middle"], "released": True})
    assert [t["thread_id"] for t in matched] == [ids[1]]
    assert matched[0]["metadata"]["rank"] == 20 and matched[0]["metadata"]["grapharc_status"] == "completed"
    assert await client.threads.count(metadata=mine, values={"legs": ["nowhere"]}) == 0
    by_status = await client.threads.search(metadata=mine, sort_by="status", sort_order="asc")
    assert {t["status"] for t in by_status} == {"idle"} and len(by_status) == 3


async def refuse_graphs_keys_and_oversized_metadata(client: Any) -> None:
    """GraphARC's own keys are read-only and metadata is bounded: refused naming why, nothing kept."""
    story = uuid.uuid4().hex
    problem = await refused(client.threads.create(graph_id=RELAY, metadata={
        "story": story, "outcome": "approved", "grapharc_status": "completed"}))
    assert "grapharc_status, outcome are GraphARC's and read-only" in problem["detail"]
    assert await client.threads.count(metadata={"story": story}) == 0

    made = await client.threads.create(graph_id=RELAY, metadata={"story": story, "note": "kept"})
    thread = made["thread_id"]
    before = await client.threads.get(thread)
    problem = await refused(client.threads.update(thread, metadata={"graph_id": CREDIT}))
    assert "graph_id are GraphARC's" in problem["detail"]
    problem = await refused(client.threads.update(thread, metadata={"note": "é" * 40_000}))
    assert "at most 65,536 bytes" in problem["detail"] and "80,0" in problem["detail"]
    await refused(client.threads.create(graph_id=RELAY, metadata={"story": story, "blob": "x" * 70_000}))
    await refused(client.threads.update(thread, metadata={"note": "x"}, ttl=5))  # no thread ttl here
    await refused(client.threads.update("no-such-thread", metadata={"note": "x"}), 404)
    assert (await client.threads.get(thread))["metadata"] == before["metadata"]
    assert await client.threads.count(metadata={"story": story}) == 1


async def delay_a_run_with_after_seconds(client: Any) -> None:
    """A run created with ``after_seconds`` is not claimed before its time: a run queued after it on
    another thread ends while it is still pending; one put off briefly runs once its time comes."""
    put_off = (await client.threads.create(graph_id=WAITER))["thread_id"]
    later = await client.runs.create(put_off, WAITER, input={"release_file": RELEASED}, after_seconds=3600)
    other = (await client.threads.create(graph_id=WAITER))["thread_id"]
    assert (await client.runs.wait(other, WAITER, input={"release_file": RELEASED}))["released"] is True
    assert (await client.runs.get(put_off, later["run_id"]))["status"] == "pending"
    await client.runs.cancel(put_off, later["run_id"])
    assert (await client.runs.get(put_off, later["run_id"]))["status"] == "interrupted"

    soon = await client.runs.create(put_off, WAITER, input={"release_file": RELEASED}, after_seconds=0.5)
    assert (await client.runs.join(put_off, soon["run_id"]))["released"] is True
    assert (await client.runs.get(put_off, soon["run_id"]))["status"] == "success"
    problem = await refused(client.runs.create(put_off, WAITER, input={}, after_seconds=-1))
    assert problem["errors"][0]["loc"] == ["body", "after_seconds"]
