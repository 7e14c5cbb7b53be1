"""Requests that take no needless trip to a worker thread: FastAPI runs a sync dependency, and
Starlette a sync iterator's every item, on a worker thread, and under load each trip costs the
event loop more than the work it carries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio.to_thread
import pytest
from api_graphs import RELAY
from fastapi.testclient import TestClient

from grapharc.server.api.context import open_context
from grapharc.server.app import create_app


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
