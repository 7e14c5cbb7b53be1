"""The worker loop (real SQLite stores, in this process): it takes over runs whose worker died
before finishing them (a run whose turn never began is run; one whose turn ended is only
recorded), starts a run queued behind another as soon as that one ends, and reads the trail
only from where a run's part of it begins when it records the run's end."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from api_graphs import ODD, register

import grapharc.server.api.worker as worker_module
from grapharc.runs.contracts import RunStore
from grapharc.runs.records import RunRecord
from grapharc.server.api.progress import Progress
from grapharc.server.api.worker import RunWorker
from grapharc.session import SessionManager
from grapharc.session.records import AuditEntry
from grapharc.stores import open_store

DEAD = "dead-worker"


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[SessionManager, RunStore]]:
    manager = SessionManager(tmp_path / "sessions", lease_seconds=1)
    register(manager)
    runs = open_store(f"sqlite:{tmp_path / 'sessions'}", kind="runs")
    yield manager, runs
    runs.close()
    manager.close()


def _claimed_by_the_dead(manager: SessionManager, runs: RunStore) -> RunRecord:
    """A run of a new odd-values thread, claimed by a worker whose claim ran out long ago."""
    thread = manager.create(ODD).thread_id
    now = time.time()
    asked = RunRecord(run_id=uuid4().hex, thread_id=thread, assistant_id=ODD,
                      request={"kind": "start", "input": {}}, created_at=now, updated_at=now)
    runs.add(asked, exclusive=True)
    claimed = runs.claim_next(DEAD, now - 100, 1, [ODD])
    assert claimed is not None
    return claimed


def _until_ended(manager: SessionManager, runs: RunStore, run: RunRecord) -> RunRecord:
    async def drive() -> RunRecord:
        worker = RunWorker(manager, runs, Progress())
        worker.start()
        try:
            while not (record := await asyncio.to_thread(runs.get, run.thread_id, run.run_id)).ended:
                await asyncio.sleep(0.05)
            return record
        finally:
            await worker.stop()
            await manager.aclose()

    return asyncio.run(drive())


def test_a_run_whose_worker_died_before_its_turn_began_is_run(stores) -> None:
    manager, runs = stores
    run = _claimed_by_the_dead(manager, runs)
    ended = _until_ended(manager, runs, run)
    assert (ended.status, ended.attempts, ended.worker) == ("success", 2, manager.runner)
    assert [e.node for e in manager.audit(run.thread_id) if e.kind == "node"] == ["answer_oddly"]
    assert ended.after_seq is not None and ended.end_seq == manager.audit(run.thread_id)[-1].seq


def test_a_run_whose_worker_died_after_its_turn_ended_is_only_recorded(stores) -> None:
    manager, runs = stores
    run = _claimed_by_the_dead(manager, runs)
    runs.begin(run.run_id, DEAD, manager.audit(run.thread_id)[-1].seq)
    manager.run(run.thread_id, {})  # the dead worker's turn, which ended before its record did
    ended = _until_ended(manager, runs, run)
    assert ended.status == "success" and ended.attempts == 2
    trail = manager.audit(run.thread_id)
    assert [e.kind for e in trail if e.kind in ("claimed", "reclaimed")] == ["claimed"]
    assert [e.node for e in trail if e.kind == "node"] == ["answer_oddly"]


def test_a_run_queued_behind_another_starts_when_that_one_ends_not_at_the_next_poll(
        stores, monkeypatch: pytest.MonkeyPatch) -> None:
    manager, runs = stores
    monkeypatch.setattr(worker_module, "POLL_SECONDS", 3600)  # no poll comes to the rescue
    thread = manager.create(ODD).thread_id
    now = time.time()
    first, second = (RunRecord(run_id=uuid4().hex, thread_id=thread, assistant_id=ODD,
                               request={"kind": "start", "input": {}}, created_at=now, updated_at=now)
                     for _ in range(2))
    runs.add(first, exclusive=True)
    runs.add(second, exclusive=False)

    async def drive() -> RunRecord:
        worker = RunWorker(manager, runs, Progress())
        worker.start()
        try:
            while not (record := await asyncio.to_thread(runs.get, thread, second.run_id)).ended:
                await asyncio.sleep(0.05)
            return record
        finally:
            await worker.stop()
            await manager.aclose()

    ended = asyncio.run(asyncio.wait_for(drive(), timeout=120))  # bounds a hang; measures nothing
    assert ended.status == "success"
    assert [e.node for e in manager.audit(thread) if e.kind == "node"] == ["answer_oddly", "answer_oddly"]


def test_a_run_on_a_long_thread_reads_only_its_own_part_of_the_trail_when_it_ends(stores) -> None:
    manager, runs = stores
    thread = manager.create(ODD).thread_id
    manager.run(thread, {})  # an earlier turn: the thread's trail already holds entries
    begun = manager.audit(thread)[-1].seq
    now = time.time()
    run = RunRecord(run_id=uuid4().hex, thread_id=thread, assistant_id=ODD,
                    request={"kind": "start", "input": {}}, created_at=now, updated_at=now)
    runs.add(run, exclusive=True)
    afters: list[int] = []
    audit = manager.audit

    def audit_spy(thread_id: str, after: int = 0) -> list[AuditEntry]:
        afters.append(after)
        return audit(thread_id, after)

    manager.audit = audit_spy  # type: ignore[method-assign]
    ended = _until_ended(manager, runs, run)
    assert ended.status == "success" and ended.after_seq == begun
    assert afters == [0, begun]  # the whole trail once, to find where the run begins; then its part


def test_a_runs_end_is_recorded_from_the_session_its_turn_returned_in_one_trip(
        stores, monkeypatch: pytest.MonkeyPatch) -> None:
    manager, runs = stores
    thread = manager.create(ODD).thread_id
    now = time.time()
    run = RunRecord(run_id=uuid4().hex, thread_id=thread, assistant_id=ODD,
                    request={"kind": "start", "input": {}}, created_at=now, updated_at=now)
    runs.add(run, exclusive=True)
    reads: list[str] = []
    get = manager.get

    def get_spy(thread_id: str) -> Any:
        reads.append(thread_id)
        return get(thread_id)

    monkeypatch.setattr(manager, "get", get_spy)
    assert _until_ended(manager, runs, run).status == "success"
    assert reads == [thread]  # the turn's own read of where it left the thread; the worker reads none
