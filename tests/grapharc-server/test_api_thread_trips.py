"""Requests that take no needless trip to a worker thread: FastAPI runs a sync dependency, and
Starlette a sync iterator's every item, on a worker thread, and under load each trip costs the
event loop more than the work it carries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio.to_thread
import pytest
from api_graphs import ODD, RELAY
from fastapi.testclient import TestClient

from grapharc.server.api.context import open_context
from grapharc.server.app import create_app
from grapharc.testing.thread_trips import thread_trips


def test_reading_a_thread_and_its_trace_runs_no_dependency_or_line_on_a_worker_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    thread = ctx.manager.create(RELAY).thread_id
    (tmp_path / "release").touch()
    ctx.manager.run(thread, {"release_file": str(tmp_path / "release")})
    trips: list[Any] = []
    run_sync = anyio.to_thread.run_sync

    async def counted(func: Any, *args: Any, **kwargs: Any) -> Any:
        trips.append(func)
        return await run_sync(func, *args, **kwargs)

    with TestClient(create_app(api=ctx), base_url="http://localhost") as client:
        monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
        assert client.get(f"/threads/{thread}").status_code == 200
        trace = client.get(f"/threads/{thread}/trace")
        monkeypatch.setattr(anyio.to_thread, "run_sync", run_sync)
    lines = [json.loads(line) for line in trace.text.splitlines()]
    assert [entry["seq"] for entry in lines] == [entry.seq for entry in ctx.manager.audit(thread)]
    assert trips == []


def test_creating_a_thread_and_queueing_a_run_over_sqlite_takes_no_trip_to_the_store_pool(
        tmp_path: Path) -> None:
    """Each trip to the store pool costs the event loop a hand-off each way: over SQLite a thread's
    creation (one trip before) and a run's queueing (two: reading the thread, adding the run) run on
    the loop, where nothing in them waits."""
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    with TestClient(create_app(api=ctx), base_url="http://localhost") as client:
        with thread_trips() as trips:
            made = client.post("/threads", json={"metadata": {"graph_id": ODD}})
            thread = made.json()["thread_id"]
            queued = client.post(f"/threads/{thread}/runs", json={"assistant_id": ODD, "input": {}})
        assert (made.status_code, queued.status_code) == (200, 200)
        client.get(f"/threads/{thread}/runs/{queued.json()['run_id']}/join")
    assert ctx.manager.get(thread).status == "completed"
    assert [name for name in trips.names() if name not in ("_due", "_renew")] == []  # the worker's own
