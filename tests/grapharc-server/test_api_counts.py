"""Counting and filtering assistants and threads through the official ``langgraph-sdk`` client: counts
agree with searches, and a metadata filter holds a thread to every pair it names."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from api_graphs import registered_names
from langgraph_sdk import get_client

RELAY = "relay"
ASSISTANTS = registered_names()


def test_assistants_are_counted_and_filtered_as_they_are_searched(api_server: str) -> None:
    async def story() -> dict[str, Any]:
        client = get_client(url=api_server)
        return {"all": await client.assistants.count(),
                "relay": await client.assistants.count(graph_id=RELAY),
                "named": await client.assistants.count(name=RELAY),
                "nobody": await client.assistants.count(graph_id="nobody"),
                "tagged": await client.assistants.count(metadata={"team": "x"}),
                "found": await client.assistants.search(metadata={"team": "x"}),
                "listed": await client.assistants.search(limit=100)}

    seen = asyncio.run(story())
    assert seen["all"] == len(ASSISTANTS) == len(seen["listed"])
    assert sorted(a["assistant_id"] for a in seen["listed"]) == ASSISTANTS
    assert (seen["relay"], seen["named"], seen["nobody"], seen["tagged"], seen["found"]) == (1, 1, 0, 0, [])


def test_threads_are_counted_and_filtered_by_every_metadata_pair(api_server: str) -> None:
    async def story() -> dict[str, Any]:
        client = get_client(url=api_server)
        before = await client.threads.count(metadata={"graph_id": RELAY})
        made = [(await client.threads.create(graph_id=RELAY))["thread_id"] for _ in range(3)]
        await client.runs.wait(made[0], RELAY, input={})
        return {
            "made": made, "before": before,
            "relay": await client.threads.count(metadata={"graph_id": RELAY}),
            "relay_idle": await client.threads.count(metadata={"graph_id": RELAY}, status="idle"),
            "completed": await client.threads.search(
                metadata={"graph_id": RELAY, "grapharc_status": "completed"}, limit=1000),
            "created": await client.threads.count(metadata={"graph_id": RELAY, "grapharc_status": "created"}),
            "foreign_key": await client.threads.search(metadata={"graph_id": RELAY, "user": "u-1"}),
            "foreign_count": await client.threads.count(metadata={"user": "u-1"}),
        }

    seen = asyncio.run(story())
    assert seen["relay"] == seen["before"] + 3 and seen["relay_idle"] == seen["relay"]
    assert seen["made"][0] in {t["thread_id"] for t in seen["completed"]}
    assert not {seen["made"][1], seen["made"][2]} & {t["thread_id"] for t in seen["completed"]}
    assert seen["created"] >= 2
    assert (seen["foreign_key"], seen["foreign_count"]) == ([], 0)


def test_a_count_refuses_what_a_search_refuses(api_server: str) -> None:
    with httpx.Client(base_url=api_server, timeout=30) as client:
        for path, body in (("/threads/count", {"status": "sleeping"}), ("/threads/count", {"limit": 5}),
                           ("/assistants/count", {"colour": "red"}), ("/threads/count", {"metadata": []})):
            refused = client.post(path, json=body)
            assert refused.status_code == 422, (path, body, refused.text)
            assert refused.headers["content-type"] == "application/problem+json"


def test_a_thread_refuses_metadata_keys_grapharc_keeps_and_is_not_created(api_server: str) -> None:
    with httpx.Client(base_url=api_server, timeout=30) as client:
        before = client.post("/threads/count", json={}).json()
        refused = client.post("/threads", json={"metadata": {"graph_id": RELAY, "outcome": "x"}})
        assert refused.status_code == 422 and refused.headers["content-type"] == "application/problem+json"
        assert "outcome are GraphARC's and read-only" in refused.json()["detail"]
        assert client.post("/threads/count", json={}).json() == before
        kept = client.post("/threads", json={"metadata": {"graph_id": RELAY}})
        assert kept.status_code == 200 and kept.json()["metadata"]["graph_id"] == RELAY
