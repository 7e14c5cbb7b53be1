"""A thread's state at a past checkpoint, through the official ``langgraph-sdk`` client: every
checkpoint its history lists reads back the same by id (``GET .../state/{id}``) and by checkpoint
(``POST .../state/checkpoint``); a checkpoint the thread does not have is a 404 naming it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.errors import NotFoundError
from server_process import api_server_url

api_server = api_server_url("past-states")
"""The module's one server: each test makes threads of its own and reads only those."""

RELAY = "relay"


def _finished_relay(api_server: str) -> tuple[str, list[dict[str, Any]]]:
    """A relay thread run to its end, and its history (newest first)."""

    async def story() -> tuple[str, list[dict[str, Any]]]:
        client = get_client(url=api_server)
        thread = (await client.threads.create(graph_id=RELAY))["thread_id"]
        await client.runs.wait(thread, RELAY, input={})
        return thread, list(await client.threads.get_history(thread, limit=20))

    return asyncio.run(story())


def test_every_past_checkpoint_reads_back_by_id_and_by_checkpoint(api_server: str) -> None:
    thread, history = _finished_relay(api_server)

    async def read_back() -> list[tuple[dict[str, Any], dict[str, Any]]]:
        client = get_client(url=api_server)
        pairs = []
        for past in history:
            checkpoint_id = past["checkpoint"]["checkpoint_id"]
            by_id = await client.threads.get_state(thread, checkpoint_id=checkpoint_id)
            by_checkpoint = await client.threads.get_state(
                thread, checkpoint={"checkpoint_id": checkpoint_id, "thread_id": thread, "checkpoint_ns": ""})
            pairs.append((by_id, by_checkpoint))
        return pairs

    pairs = asyncio.run(read_back())
    assert len(history) >= 4  # input, three legs, the end
    legs_seen = [past["values"].get("legs") for past in history]
    assert legs_seen[0] == ["first", "middle", "last"] and ["first"] in legs_seen
    for past, (by_id, by_checkpoint) in zip(history, pairs, strict=True):
        for key in ("values", "next", "checkpoint", "parent_checkpoint", "metadata", "created_at"):
            assert by_id[key] == by_checkpoint[key] == past[key], key
        assert [t["name"] for t in by_id["tasks"]] == [t["name"] for t in past["tasks"]]


def test_a_checkpoint_the_thread_does_not_have_is_a_404_naming_it(api_server: str) -> None:
    thread, history = _finished_relay(api_server)
    other, _ = _finished_relay(api_server)
    foreign = history[1]["checkpoint"]["checkpoint_id"]

    async def ask(checkpoint_id: str) -> None:
        await get_client(url=api_server).threads.get_state(other if checkpoint_id == foreign else thread,
                                                           checkpoint_id=checkpoint_id)

    for missing in ("no-such-checkpoint", foreign):
        with pytest.raises(NotFoundError) as refused:
            asyncio.run(ask(missing))
        assert missing in refused.value.response.json()["detail"]


@pytest.mark.parametrize(("checkpoint", "names"), [
    ({"checkpoint_id": ""}, "checkpoint_id"),
    ({"checkpoint_id": "x", "checkpoint_ns": "sub"}, "checkpoint_ns"),
    ({"checkpoint_id": "x", "checkpoint_ns": "", "color": "red"}, "color"),
    ({"checkpoint_id": "x", "thread_id": "somebody-else"}, "somebody-else"),
])
def test_a_malformed_checkpoint_is_refused_naming_the_field(api_server: str, checkpoint: dict[str, Any],
                                                            names: str) -> None:
    thread, _ = _finished_relay(api_server)
    with httpx.Client(base_url=api_server, timeout=30) as client:
        answer = client.post(f"/threads/{thread}/state/checkpoint", json={"checkpoint": checkpoint})
    assert answer.status_code == 422
    assert answer.headers["content-type"] == "application/problem+json"
    assert names in answer.text


def test_the_sdk_pages_through_history_with_before(api_server: str) -> None:
    thread, everything = _finished_relay(api_server)

    async def pages() -> tuple[list[list[str]], list[str]]:
        client = get_client(url=api_server)
        by_id: list[str] = []
        page = await client.threads.get_history(thread, limit=2)
        while page:  # each page starts after the last: by id, then by checkpoint as the SDK names it
            by_id += [state["checkpoint"]["checkpoint_id"] for state in page]
            page = await client.threads.get_history(thread, limit=2, before=by_id[-1])
        by_checkpoint: list[list[str]] = []
        page = await client.threads.get_history(thread, limit=3)
        while page:
            by_checkpoint.append([state["checkpoint"]["checkpoint_id"] for state in page])
            page = await client.threads.get_history(thread, limit=3, before=page[-1]["checkpoint"])
        return by_checkpoint, by_id

    by_checkpoint, by_id = asyncio.run(pages())
    full = [state["checkpoint"]["checkpoint_id"] for state in everything]
    assert by_id == full == [checkpoint for page in by_checkpoint for checkpoint in page]
    assert all(len(page) == 3 for page in by_checkpoint[:-1])
    with httpx.Client(base_url=api_server, timeout=30) as client:
        unknown = client.post(f"/threads/{thread}/history", json={"limit": 2, "before": "nope"})
        foreign = client.post(f"/threads/{thread}/history",
                              json={"before": {"checkpoint_id": full[0], "thread_id": "elsewhere"}})
    assert unknown.status_code == 404 and "'nope'" in unknown.json()["detail"]
    assert foreign.status_code == 422 and "elsewhere" in foreign.json()["detail"]
