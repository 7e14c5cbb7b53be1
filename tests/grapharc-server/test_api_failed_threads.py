"""A thread whose last run failed, through the official ``langgraph-sdk`` on a real server: as on
LangGraph's server, a new run starts there from the last good checkpoint, and the failure stays on
the thread's trail."""

from __future__ import annotations

import json

import httpx
import pytest
from api_graphs import FAILING
from langgraph_sdk import get_sync_client
from server_process import api_server_url

server = api_server_url("failed")


def test_a_new_run_on_a_thread_whose_last_run_failed_starts_from_its_last_good_checkpoint(
        server: str) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create(graph_id=FAILING)["thread_id"]
    with pytest.raises(Exception, match="LedgerError"):
        client.runs.wait(thread, FAILING, input={"fail": True})
    assert client.threads.get(thread)["status"] == "error"
    good = client.threads.get_state(thread)["checkpoint"]["checkpoint_id"]

    done = client.runs.wait(thread, FAILING, input={"fail": False})
    assert done == {"fail": False, "done": True}
    assert client.threads.get(thread)["status"] == "idle"
    history = client.threads.get_history(thread, limit=100)
    assert good in {state["checkpoint"]["checkpoint_id"] for state in history}  # built on, not replaced
    assert [run["status"] for run in client.runs.list(thread)] == ["success", "error"]
    trail = [json.loads(line) for line in httpx.get(f"{server}/threads/{thread}/trace").text.splitlines()]
    kinds = [entry["kind"] for entry in trail]
    assert "failed" in kinds[:kinds.index("claimed", kinds.index("failed"))]  # the failure stays on it
