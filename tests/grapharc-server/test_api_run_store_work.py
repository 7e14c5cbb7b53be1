"""What one streamed run reads, writes and decodes in the stores, counted (not timed): a stream
reads its run on every wake, and each read that decodes or repeats work is paid by every run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from api_graphs import ODD
from fastapi.testclient import TestClient
from server_process import sse_events

import grapharc.runs.sql_store
from grapharc.runs.records import RunRecord, record_of
from grapharc.server.api import streaming
from grapharc.server.api.context import open_context
from grapharc.server.app import create_app
from grapharc.session import SqliteSessionStore
from grapharc.session.lease import Lease
from grapharc.session.records import Session
from grapharc.sqlite.runs import SqliteRunStore


def _streamed(client: TestClient, graph: str) -> list[dict[str, Any]]:
    """A new thread's run of ``graph`` streamed in the ``updates`` mode, read to its end."""
    thread = client.post("/threads", json={"metadata": {"graph_id": graph}}).json()["thread_id"]
    body = {"assistant_id": graph, "input": {}, "stream_mode": "updates"}
    with client.stream("POST", f"/threads/{thread}/runs/stream", json=body) as response:
        return sse_events(response.read().decode())


def test_a_streamed_run_decodes_its_run_record_only_where_it_is_added_and_claimed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    decoded: list[str] = []

    def counted(row: dict[str, Any]) -> RunRecord:
        decoded.append(row["run_id"])
        return record_of(row)

    with TestClient(create_app(api=ctx), base_url="http://localhost") as client:
        _streamed(client, ODD)  # warm: the first run's reads are not every run's
        monkeypatch.setattr(grapharc.runs.sql_store, "record_of", counted)
        events = _streamed(client, ODD)
    assert events[-1]["event"] == "end" and '"success"' in events[-1]["data"]
    assert [e["event"] for e in events].count("updates") == 1
    # the queue's add and the worker's claim; the stream's reads of the run decoded it 4 times more
    assert len(decoded) == 2


def test_a_streamed_run_records_its_nodes_once_each_and_nothing_when_settling_finds_none_new(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    recorded: list[int] = []
    record_nodes = SqliteSessionStore.record_nodes

    def counted(self: SqliteSessionStore, lease: Lease, runs: Any, audited_step: int, now: float) -> int:
        runs = list(runs)
        recorded.append(len(runs))
        return record_nodes(self, lease, runs, audited_step, now)

    with TestClient(create_app(api=ctx), base_url="http://localhost") as client:
        _streamed(client, ODD)
        monkeypatch.setattr(SqliteSessionStore, "record_nodes", counted)
        events = _streamed(client, ODD)
    assert events[-1]["event"] == "end" and '"success"' in events[-1]["data"]
    # the node's own scan records it; the settling after the pass finds nothing new and writes
    # nothing (it wrote the same watermark again: four statements on the session store a run)
    assert recorded == [1]


def test_a_streamed_run_reads_its_thread_whole_only_where_a_caller_is_answered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    read: list[str] = []
    get = SqliteSessionStore.get

    def counted(self: SqliteSessionStore, thread_id: str) -> Session:
        read.append(thread_id)
        return get(self, thread_id)

    with TestClient(create_app(api=ctx), base_url="http://localhost") as client:
        _streamed(client, ODD)
        monkeypatch.setattr(SqliteSessionStore, "get", counted)
        events = _streamed(client, ODD)
    assert events[-1]["event"] == "end" and '"success"' in events[-1]["data"]
    # the run's request reads its thread; the turn's end has the session it leaves from its own
    # write (``finish`` returns it), and the turn's start reads only the thread's graph (``graph_of``)
    assert len(read) == 1


def test_a_streamed_run_reads_its_records_only_when_a_wake_up_may_bring_an_event(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's beginning, the turn's claim and the record of the run it made render nothing in
    the ``updates`` mode: the stream lets their wake-ups pass, and reads for the node and at the end."""
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    reads: list[list[str]] = []
    read = streaming._read

    def counted(*args: Any) -> Any:
        done = read(*args)
        reads.append([str(entry.kind) for entry in done[2]])
        return done

    with TestClient(create_app(api=ctx), base_url="http://localhost") as client:
        _streamed(client, ODD)
        monkeypatch.setattr(streaming, "_read", counted)
        events = _streamed(client, ODD)
    assert [e["event"] for e in events] == ["metadata", "updates", "end"]
    # the reads at the stream's start, at the claim and at the run's record sent nothing: 4 before
    # (or 5, when the first found the run queued); only the last may find no node
    assert len(reads) <= 2 and all("node" in kinds for kinds in reads[:-1]), reads


def test_the_worker_claims_a_run_queued_alone_without_asking_first_whether_there_is_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The route that queued a run it knows is runnable (rejecting others on its thread, not
    delayed) says so: the worker's look claims at once, and asks ``has_work`` only after the run."""
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    looks: list[str] = []
    has_work = SqliteRunStore.has_work

    def counted(self: SqliteRunStore, worker: str, now: float, graphs: Any) -> bool:
        found = has_work(self, worker, now, graphs)
        looks.append(str(found))
        return found

    with TestClient(create_app(api=ctx), base_url="http://localhost") as client:
        _streamed(client, ODD)
        monkeypatch.setattr(SqliteRunStore, "has_work", counted)
        events = _streamed(client, ODD)
    assert events[-1]["event"] == "end" and '"success"' in events[-1]["data"]
    assert looks == ["False"]  # the look after the run's end, for a run queued behind it: none
