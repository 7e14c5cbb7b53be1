"""``threads.get_history(metadata=...)`` through the official ``langgraph-sdk`` on a real server:
only the checkpoints whose metadata has the pairs asked for, as LangGraph filters them."""

from __future__ import annotations

import httpx
from api_graphs import RELAY
from langgraph_sdk import get_sync_client
from server_process import api_server_url

server = api_server_url("history")


def test_get_history_with_metadata_keeps_only_the_checkpoints_that_match(server: str) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create(graph_id=RELAY)["thread_id"]
    runs = []
    for _ in range(2):
        runs.append(client.runs.create(thread, RELAY, input={"release_file": __file__}))
        client.runs.join(thread, runs[-1]["run_id"])
    everything = client.threads.get_history(thread, limit=100)
    first = runs[0]["run_id"]

    mine = client.threads.get_history(thread, limit=100, metadata={"run_id": first})
    assert mine == [state for state in everything if state["metadata"].get("run_id") == first]
    assert 0 < len(mine) < len(everything)
    inputs = client.threads.get_history(thread, limit=100, metadata={"source": "input", "run_id": first})
    assert [state["metadata"]["step"] for state in inputs] == [-1]
    assert client.threads.get_history(thread, limit=1, metadata={"run_id": first}) == mine[:1]
    paged = client.threads.get_history(thread, limit=100, metadata={"run_id": first},
                                       before=mine[0]["checkpoint"])
    assert paged == mine[1:]
    assert client.threads.get_history(thread, metadata={"run_id": "no-such-run"}) == []


def test_a_metadata_filter_that_is_not_an_object_is_refused(server: str) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create(graph_id=RELAY)["thread_id"]
    refused = httpx.post(f"{server}/threads/{thread}/history", json={"metadata": ["run_id"]})
    assert refused.status_code == 422 and "metadata" in refused.text
