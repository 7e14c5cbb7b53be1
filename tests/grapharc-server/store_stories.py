"""The long-term store's stories, told through the official SDK's ``client.store`` against a real
server: shared by the SQLite/in-process server tests and the PostgreSQL ones (any object that looks
like the async client works: the client itself, ``Synced`` around the sync client, two servers'
clients ``Alternating``). Each story keeps under its own first label, so several share a server."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import Any

from langgraph_sdk.errors import APIStatusError

PATIENCE_SECONDS = 60.0
"""Bound on waiting for an item to expire; no assertion measures time with it."""


class Synced:
    """Looks like the async client; each call runs the sync client's method in a thread."""

    def __init__(self, sync_client: Any) -> None:
        self._client = sync_client

    def __getattr__(self, resource: str) -> Any:
        return _SyncedResource(getattr(self._client, resource))


class _SyncedResource:
    def __init__(self, resource: Any) -> None:
        self._resource = resource

    def __getattr__(self, method: str) -> Any:
        call = getattr(self._resource, method)

        async def run(*args: Any, **kwargs: Any) -> Any:
            return await asyncio.to_thread(call, *args, **kwargs)
        return run


async def refused(call: Any) -> tuple[int, dict[str, Any]]:
    """The status and problem document of an SDK call the server refuses."""
    try:
        await call
    except APIStatusError as exc:
        return exc.response.status_code, exc.response.json()
    raise AssertionError("the server accepted the call")


async def put_get_search_delete(client: Any, root: str) -> None:
    """Items put under ``root`` come back by key, by filter, by ranked query and paged; namespaces
    list by prefix, suffix and depth; a deleted item is gone from every answer."""
    store = client.store
    await store.put_item([root, "ada"], "engine", {"text": "the analytical engine weaves patterns",
                                                   "year": 1843, "kind": "note"})
    await store.put_item([root, "ada"], "poetry", {"text": "poetical science", "year": 1842, "kind": "note"})
    await store.put_item([root, "charles"], "engine", {"text": "the difference engine engine", "year": 1822,
                                                       "kind": "design"})
    await store.put_item([root, "charles"], "hidden", {"text": "engine"}, index=False)

    got = await store.get_item([root, "ada"], "engine")
    assert got["namespace"] == [root, "ada"] and got["key"] == "engine"
    assert got["value"] == {"text": "the analytical engine weaves patterns", "year": 1843, "kind": "note"}
    assert got["created_at"] == got["updated_at"]
    assert await store.get_item([root, "ada"], "missing") is None

    everything = (await store.search_items([root], limit=10))["items"]
    assert [(item["namespace"][1], item["key"]) for item in everything] == [
        ("charles", "hidden"), ("charles", "engine"), ("ada", "poetry"), ("ada", "engine")]  # newest first
    assert all(item["score"] is None for item in everything)
    page = (await store.search_items([root], limit=2, offset=1))["items"]
    assert [item["key"] for item in page] == ["engine", "poetry"]
    notes = (await store.search_items([root], filter={"kind": "note"}))["items"]
    assert {item["key"] for item in notes} == {"engine", "poetry"}
    later = (await store.search_items([root], filter={"year": {"$gte": 1842}, "kind": {"$ne": "design"}}))
    assert {item["key"] for item in later["items"]} == {"engine", "poetry"}

    ranked = (await store.search_items([root], query="engine"))["items"]
    assert [(item["namespace"][1], item["key"]) for item in ranked] == [
        ("charles", "engine"), ("ada", "engine")]
    assert ranked[0]["score"] >= ranked[1]["score"] > 0  # twice the term: ranked first; index=False: unfound
    only_ada = (await store.search_items([root, "ada"], query="engine poetical", limit=1))["items"]
    assert len(only_ada) == 1 and only_ada[0]["namespace"] == [root, "ada"]

    listed = (await store.list_namespaces(prefix=[root]))["namespaces"]
    assert listed == [[root, "ada"], [root, "charles"]]
    assert (await store.list_namespaces(prefix=[root], suffix=["ada"]))["namespaces"] == [[root, "ada"]]
    assert (await store.list_namespaces(prefix=[root], max_depth=1))["namespaces"] == [[root]]

    await store.put_item([root, "ada"], "engine", {"text": "rewritten", "year": 1843, "kind": "note"})
    again = await store.get_item([root, "ada"], "engine")
    assert again["value"]["text"] == "rewritten" and again["created_at"] == got["created_at"]
    assert datetime.fromisoformat(again["updated_at"]) > datetime.fromisoformat(got["updated_at"])

    await store.delete_item([root, "ada"], "engine")
    assert await store.get_item([root, "ada"], "engine") is None
    assert "engine" not in {item["key"] for item in (await store.search_items([root, "ada"]))["items"]}
    await store.delete_item([root, "ada"], "poetry")
    assert (await store.list_namespaces(prefix=[root]))["namespaces"] == [[root, "charles"]]


async def items_expire(client: Any, root: str) -> None:
    """An item put with a TTL (minutes) is gone once it has passed; one without stays."""
    await client.store.put_item([root], "brief", {"text": "short lived"}, ttl=0.02)
    await client.store.put_item([root], "lasting", {"text": "kept"})
    assert (await client.store.get_item([root], "brief", refresh_ttl=False)) is not None
    deadline = time.monotonic() + PATIENCE_SECONDS
    while await client.store.get_item([root], "brief", refresh_ttl=False) is not None:
        assert time.monotonic() < deadline, "the item outlived its TTL by a minute"
        await asyncio.sleep(0.2)
    assert [item["key"] for item in (await client.store.search_items([root]))["items"]] == ["lasting"]
