"""The worker loop (real SQLite stores, in this process): it takes over runs whose worker died
before finishing them (a run whose turn never began is run; one whose turn ended is only
recorded), starts a run queued behind another as soon as that one ends, and reads the trail
only from where a run's part of it begins when it records the run's end; a thread an inbox
decision claimed is carried on under that decision's lease when it is handed over here, and
recovered from its checkpoint when the worker it was handed to died; a cancel arriving while a run
claims its thread (held there by the test) ends the claimed turn where the thread stands."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from api_graphs import ODD, STEER, register

import grapharc.server.api.worker as worker_module
from grapharc.examples.approval import CREDIT_DESK
from grapharc.examples.approval import GRAPH_NAME as CREDIT
from grapharc.runs.contracts import RunStore
from grapharc.runs.records import RunRecord
from grapharc.server.api.progress import Progress
from grapharc.server.api.worker import CARRY_ON, RunWorker
from grapharc.session import SessionManager
from grapharc.session.lease import Lease
from grapharc.session.records import AuditEntry
from grapharc.sqlite.files import RUNS_FILE, SESSIONS_FILE
from grapharc.stores import open_store
from grapharc.testing.busy_files import busy_in_place
from grapharc.testing.thread_trips import thread_trips

DEAD = "dead-worker"


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[SessionManager, RunStore]]:
    manager = SessionManager(tmp_path / "sessions", lease_seconds=1)
    register(manager)
    runs = open_store(f"sqlite:{tmp_path / 'sessions'}", kind="runs")
    yield manager, runs
    runs.close()
    manager.close()


def _start(thread: str) -> RunRecord:
    """A run asking for a start turn of an odd-values thread."""
    now = time.time()
    return RunRecord(run_id=uuid4().hex, thread_id=thread, assistant_id=ODD,
                     request={"kind": "start", "input": {}}, created_at=now, updated_at=now)


def _claimed_by_the_dead(manager: SessionManager, runs: RunStore) -> RunRecord:
    """A run of a new odd-values thread, claimed by a worker whose claim ran out long ago."""
    thread = manager.create(ODD).thread_id
    runs.add(_start(thread), exclusive=True)
    claimed = runs.claim_next(DEAD, time.time() - 100, 1, [ODD])
    assert claimed is not None
    return claimed


def _until_ended(manager: SessionManager, runs: RunStore,
                 run: RunRecord | Callable[[RunWorker], Awaitable[RunRecord]]) -> RunRecord:
    """Run a worker until ``run`` (or the run ``run(worker)`` hands it) has ended."""
    async def drive() -> RunRecord:
        worker = RunWorker(manager, runs, Progress())
        watched = run if isinstance(run, RunRecord) else await run(worker)
        worker.start()
        try:
            while not (record := await asyncio.to_thread(runs.get, watched.thread_id, watched.run_id)).ended:
                await asyncio.sleep(0.05)
            return record
        finally:
            await worker.stop()
            await manager.aclose()

    return asyncio.run(asyncio.wait_for(drive(), timeout=120))  # bounds a hang; measures nothing


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
    first, second = _start(thread), _start(thread)
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


def test_an_idle_worker_looks_unwoken_every_poll_seconds_and_sooner_only_to_renew_its_claims(
        stores, monkeypatch: pytest.MonkeyPatch) -> None:
    """Idle, the loop waits ``POLL_SECONDS`` (2 s, each look a read; 0.5 s before) between looks
    unless woken; with runs executing here it looks again by the time their claims are due."""
    manager, runs = stores
    waits: list[float] = []
    original = asyncio.timeout

    def recorded(delay: float | None) -> Any:
        waits.append(delay or 0.0)
        return original(delay)

    async def idle_waits() -> list[float]:
        worker = RunWorker(manager, runs, Progress())
        monkeypatch.setattr(worker_module.asyncio, "timeout", recorded)
        worker.start()
        try:
            for _ in range(3):
                while len(waits) < 1 + _:
                    await asyncio.sleep(0.01)
                worker.wake()
            return waits[:3]
        finally:
            monkeypatch.setattr(worker_module.asyncio, "timeout", original)
            await worker.stop()
            await manager.aclose()

    assert asyncio.run(asyncio.wait_for(idle_waits(), timeout=120)) == [2.0, 2.0, 2.0]
    assert worker_module.POLL_SECONDS == 2.0

    executing = RunWorker(manager, runs, Progress())
    executing._executing["run"] = (_start("t"), None)  # type: ignore[assignment]
    renewal = manager.lease_seconds / worker_module.RENEWALS_PER_TTL  # 1 s leases: every 1/6 s
    executing._renewed_at = manager.clock() - renewal / 2
    assert 0 < executing._until_next_look() <= renewal / 2


def test_a_run_on_a_long_thread_reads_no_entry_of_the_trail_to_find_where_its_part_begins_and_ends(
        stores) -> None:
    manager, runs = stores
    thread = manager.create(ODD).thread_id
    manager.run(thread, {})  # an earlier turn: the thread's trail already holds entries
    begun = manager.audit(thread)[-1].seq
    run = runs.add(_start(thread), exclusive=True)
    afters: list[int] = []
    ends: list[int] = []
    audit, last_seq = manager.audit, manager.last_seq

    def audit_spy(thread_id: str, after: int = 0) -> list[AuditEntry]:
        afters.append(after)
        return audit(thread_id, after)

    def last_seq_spy(thread_id: str, after: int = 0) -> int:
        ends.append(after)
        return last_seq(thread_id, after)

    manager.audit = audit_spy  # type: ignore[method-assign]
    manager.last_seq = last_seq_spy  # type: ignore[method-assign]
    ended = _until_ended(manager, runs, run)
    assert ended.status == "success" and ended.after_seq == begun
    assert ended.end_seq == audit(thread)[-1].seq > begun
    assert afters == [] and ends == [0, begun]  # where the trail ends, twice; no entry read


def _decided(manager: SessionManager) -> tuple[Lease, int]:
    """A credit thread paused on the desk, then approved: the decision's lease and the trail's last
    seq before it."""
    thread = manager.create(CREDIT).thread_id
    paused = manager.run(thread, {"application_id": "LN-7310"})
    before = manager.audit(thread)[-1].seq
    lease = manager.decide(thread, paused.holds[0].approval_id, "approved", decider=CREDIT_DESK)
    assert lease is not None and manager.get(thread).status == "running"
    return lease, before


def _carried(manager: SessionManager, runs: RunStore, lease: Lease, before: int, *,
             handed: bool) -> RunRecord:
    """A run carrying the decided thread on: handed over to the worker with the lease, or handed
    to a worker that died before driving it (its claim long run out; the lease dies with it)."""
    if handed:
        return _until_ended(manager, runs, lambda worker: worker.hand_over(lease, CREDIT, before, None))
    now = time.time()
    run = RunRecord(run_id=uuid4().hex, thread_id=lease.thread_id, assistant_id=CREDIT,
                    request={"kind": CARRY_ON}, created_at=now, updated_at=now, after_seq=before)
    return _until_ended(manager, runs, runs.add_claimed(run, DEAD, now - 100, 1))


def test_a_thread_handed_over_with_its_decision_s_lease_is_carried_on_under_that_lease(stores) -> None:
    manager, runs = stores
    lease, before = _decided(manager)
    ended = _carried(manager, runs, lease, before, handed=True)
    assert (ended.status, ended.after_seq) == ("success", before)
    trail = manager.audit(lease.thread_id)
    assert [e.kind for e in trail if e.kind in ("decided", "reclaimed")] == ["decided"]  # no takeover
    assert manager.get(lease.thread_id).outcome == "released"
    assert [e.node for e in trail if e.kind == "node"].count("disburse") == 1


def test_a_carrying_run_whose_worker_died_is_reclaimed_and_the_thread_recovered(
        stores, tmp_path: Path) -> None:
    manager, runs = stores
    elsewhere = SessionManager(tmp_path / "sessions", lease_seconds=1)  # the process that decided
    register(elsewhere)
    try:
        lease, before = _decided(elsewhere)
    finally:
        elsewhere.close()
    ended = _carried(manager, runs, lease, before, handed=False)
    assert (ended.status, ended.attempts) == ("success", 2)
    trail = manager.audit(lease.thread_id)
    assert [e.kind for e in trail if e.kind in ("decided", "reclaimed")] == ["decided", "reclaimed"]
    assert manager.get(lease.thread_id).outcome == "released"


def test_a_runs_end_is_recorded_from_the_session_its_turn_returned_in_one_trip(
        stores, monkeypatch: pytest.MonkeyPatch) -> None:
    manager, runs = stores
    thread = manager.create(ODD).thread_id
    run = runs.add(_start(thread), exclusive=True)
    reads: list[str] = []
    get = manager.get

    def get_spy(thread_id: str) -> Any:
        reads.append(thread_id)
        return get(thread_id)

    monkeypatch.setattr(manager, "get", get_spy)
    assert _until_ended(manager, runs, run).status == "success"
    assert reads == []  # the turn read where it left the thread as it recorded its end; the worker reads none


def test_a_start_runs_store_work_over_sqlite_takes_no_trip_to_a_thread(tmp_path: Path) -> None:
    """Each trip to the store pool costs the event loop a hand-off each way: over SQLite a start run's
    store work (its claim and beginning, the turn's claim, the pass's record and settling, the
    turn's ending, the run's end: five trips before) runs on the loop, where nothing in it waits."""
    manager = SessionManager(tmp_path / "sessions")  # the default lease: no renewal during the run
    register(manager)
    runs = open_store(f"sqlite:{tmp_path / 'sessions'}", kind="runs")
    try:
        run = runs.add(_start(manager.create(ODD).thread_id), exclusive=True)
        with thread_trips() as trips:
            ended = _until_ended(manager, runs, run)
        assert ended.status == "success" and ended.after_seq is not None
        assert manager.audit(run.thread_id, ended.after_seq)[0].kind == "claimed"  # begun before the claim
    finally:
        runs.close()
        manager.close()
    assert trips.names() == []


def test_a_start_runs_store_work_meeting_busy_files_is_undone_and_run_in_the_pool(tmp_path: Path) -> None:
    """Another process writing the sessions and run files as each of the run's store steps tries them
    in place: each step answers busy at once, nothing of it is written, and it runs again in the
    store pool (the five trips the run took before its steps ran in place), where it waits; the run
    ends as it would have, once claimed and begun, its trail whole."""
    manager = SessionManager(tmp_path / "sessions")
    register(manager)
    runs = open_store(f"sqlite:{tmp_path / 'sessions'}", kind="runs")
    try:
        run = runs.add(_start(manager.create(ODD).thread_id), exclusive=True)
        files = [tmp_path / "sessions" / SESSIONS_FILE, tmp_path / "sessions" / RUNS_FILE]
        with busy_in_place(files) as busy:
            ended = _until_ended(manager, runs, run)
        trail = manager.audit(run.thread_id)
    finally:
        runs.close()
        manager.close()
    steps = ["_due", "_start_turn", "_record_and_settle", "_finished", "_end"]
    assert busy.tried == steps and busy.sent == steps
    assert ended.status == "success" and ended.after_seq is not None and ended.end_seq == trail[-1].seq
    assert [e.kind for e in trail].count("claimed") == 1
    assert len([e for e in trail if e.kind == "node"]) == 1  # the graph's one node, recorded once


@pytest.mark.parametrize("busy", [False, True], ids=["in-place", "busy-run-file"])
def test_a_tick_renews_reclaims_and_claims_in_one_store_call(
        stores: tuple[SessionManager, RunStore], tmp_path: Path, busy: bool) -> None:
    """Each trip to a worker thread costs the event loop more than a store call (the loop ticks
    at least once per run under load), so a tick's store calls go in one: on the loop over SQLite,
    or, where the run file is busy with another process's write, in one trip to a thread."""
    manager, runs = stores
    stale = _claimed_by_the_dead(manager, runs)
    queued = [_start(manager.create(ODD).thread_id) for _ in range(2)]
    for run in queued:
        runs.add(run, exclusive=True)
    async def tick() -> tuple[set[str], list[str]]:
        worker = RunWorker(manager, runs, Progress())
        worker._executing["busy"] = asyncio.get_running_loop().create_future()  # type: ignore[assignment]
        with thread_trips() as trips, busy_in_place([tmp_path / "sessions" / RUNS_FILE] if busy else []):
            await worker._tick()
        launched = set(worker._executing) - {"busy"}
        worker._executing.pop("busy")
        await worker.stop()
        return launched, trips.names()

    launched, trips = asyncio.run(tick())
    assert launched == {stale.run_id, *(run.run_id for run in queued)}  # reclaimed and claimed
    assert trips == (["_due"] if busy else [])


def test_an_idle_workers_ticks_only_read_that_there_is_no_work_on_the_loop(
        stores: tuple[SessionManager, RunStore]) -> None:
    """A tick with nothing to cancel, reclaim or claim, and no claim to renew, was a trip to a thread
    and three write transactions; over SQLite it is one read on the loop."""
    manager, runs = stores

    async def scenario() -> list[str]:
        worker = RunWorker(manager, runs, Progress())
        looks = asyncio.Semaphore(0)
        has_work = worker._has_work

        async def counted() -> bool:
            try:
                return await has_work()
            finally:
                looks.release()

        worker._has_work = counted  # type: ignore[method-assign]
        with thread_trips() as trips:
            worker.start()
            for _ in range(3):
                worker.wake()
                await looks.acquire()
            await worker.stop()
        return trips.names()

    assert asyncio.run(scenario()) == []


def test_a_worker_stops_when_its_stop_comes_as_a_wake_up_ends_its_wait(
        stores: tuple[SessionManager, RunStore]) -> None:
    """Found by CI, a test teardown hung: Python 3.11's ``wait_for`` swallows a cancel that
    arrives as its awaitable completes, so a worker stopped just after a ``wake`` (a run ending
    as the server stops) ran on, and ``stop`` waited for it for good."""
    manager, runs = stores
    looked = threading.Event()

    async def scenario() -> bool:
        worker = RunWorker(manager, runs, Progress())
        tick = worker._tick

        async def noted_tick() -> None:
            try:
                await tick()
            finally:
                looked.set()

        worker._tick = noted_tick  # type: ignore[method-assign]
        worker.start()
        while not looked.is_set():
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # the loop has ticked and waits for a wake-up
        worker.wake()
        await asyncio.sleep(0)  # the wait sees the wake-up ...
        try:
            await asyncio.wait_for(worker.stop(), timeout=10)  # ... as the stop comes
        except TimeoutError:
            return False
        return True

    assert asyncio.run(scenario()), "the worker ran on after it was stopped"


def _steered_by_the_dead(manager: SessionManager, runs: RunStore, tmp_path: Path, *,
                         directed: bool) -> RunRecord:
    """A steer thread answered ``left`` by a process that then died holding the thread (with
    ``directed``, after recording the goto its turn was about to apply), and the run that carried
    it on with ``goto: right``, claimed by a worker whose claim ran out long ago."""
    elsewhere = SessionManager(tmp_path / "sessions", lease_seconds=1)
    register(elsewhere)
    try:
        thread = elsewhere.create(STEER).thread_id
        paused = elsewhere.run(thread, {})
        before = elsewhere.audit(thread)[-1].seq
        lease = elsewhere.answer(thread, paused.holds[0].approval_id, "left", answerer="api")
        assert lease is not None
        goto = {"by": "api", "goto": ["right"], "update": None}
        if directed:
            elsewhere.store.record_directive(lease, {**goto, "at": ["pick"]}, time.time())
    finally:
        elsewhere.close()
    now = time.time()
    run = RunRecord(run_id=uuid4().hex, thread_id=thread, assistant_id=STEER,
                    request={"kind": CARRY_ON, "directive": goto}, created_at=now, updated_at=now,
                    after_seq=before)
    return runs.add_claimed(run, DEAD, now - 100, 1)


@pytest.mark.parametrize("directed", [False, True])
def test_a_reclaimed_run_applies_its_goto_unless_the_dead_turn_already_did(
        stores, tmp_path: Path, directed: bool) -> None:
    manager, runs = stores
    run = _steered_by_the_dead(manager, runs, tmp_path, directed=directed)
    assert _until_ended(manager, runs, run).status == "success"
    values = manager.values(run.thread_id)
    assert (values["went_left"], values.get("went_right", False)) == (True, not directed)
    trail = manager.audit(run.thread_id)
    assert [e.kind for e in trail].count("directed") == 1  # recorded once, whoever applied it


def _held_at(store: Any, method: str,
             monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """Hold the session store's ``method`` (a claim) once it has claimed, until the second event is
    set; the first is set when it has claimed."""
    claimed, go_on = threading.Event(), threading.Event()
    real = getattr(store, method)

    def held(*args: Any, **kwargs: Any) -> Any:
        taken = real(*args, **kwargs)
        claimed.set()
        go_on.wait(timeout=120)  # bounds a hang; the test sets it
        return taken

    monkeypatch.setattr(store, method, held)
    return claimed, go_on


@pytest.mark.parametrize("kind", ["start", "resume"])
def test_a_cancel_arriving_while_a_run_claims_its_thread_ends_the_claimed_turn_where_the_thread_stands(
        stores, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    manager, runs = stores
    if kind == "start":
        thread, method, run = manager.create(ODD).thread_id, "claim_start", None
    else:
        thread = manager.create(CREDIT).thread_id
        [asked] = manager.run(thread, {"application_id": "LN-7310"}).holds
        now = time.time()
        answer = {"approval_id": asked.approval_id, "decision": "approved", "decider": CREDIT_DESK}
        run = RunRecord(run_id=uuid4().hex, thread_id=thread, assistant_id=CREDIT, created_at=now,
                        updated_at=now, request={"kind": "resume", "answers": [answer]})
        method = "decide"
    added = runs.add(run if run is not None else _start(thread), exclusive=True)
    claimed, go_on = _held_at(manager.store, method, monkeypatch)
    ask = manager.cancels.ask

    def ask_then_let_the_claim_finish(thread_id: str, cancel: Any) -> None:
        ask(thread_id, cancel)
        go_on.set()  # the worker cancels the run's task right after asking, while the claim is held

    monkeypatch.setattr(manager.cancels, "ask", ask_then_let_the_claim_finish)

    async def cancel_while_claiming(worker: RunWorker) -> RunRecord:
        async def cancel() -> None:
            await asyncio.to_thread(claimed.wait, 120)
            await asyncio.to_thread(runs.request_cancel, thread, added.run_id, time.time())
            worker.wake()

        asyncio.get_running_loop().create_task(cancel())
        return added

    # a claim on the loop cannot meet a cancel; one sent to the store pool (the sessions file busy
    # with another process's write as it was tried in place) can, and the test holds it there
    with busy_in_place([manager.store.path]):
        ended = _until_ended(manager, runs, cancel_while_claiming)
    assert (ended.status, ended.error) == ("interrupted", "cancelled")
    left = manager.get(thread)
    assert (left.status, left.runner) == ("completed", None)  # not left running under a lease nobody drives
    last = manager.audit(thread)[-1]
    assert (last.kind, last.detail["run"]) == ("cancelled", added.run_id)
    assert manager.run(thread, {}).status in ("completed", "paused")  # the next turn may start at once


_WRITER = """
import sys, time, uuid
from pathlib import Path
from grapharc.runs.records import RunRecord
from grapharc.sqlite.runs import SqliteRunStore
from grapharc.sqlite.sessions import SqliteSessionStore
sessions, runs, stop = SqliteSessionStore(sys.argv[1]), SqliteRunStore(sys.argv[2]), Path(sys.argv[3])
made = 0
print("ready", flush=True)
while not stop.exists():
    thread, now = uuid.uuid4().hex, time.time()
    sessions.create(thread, "elsewhere", now)
    run = RunRecord(run_id=uuid.uuid4().hex, thread_id=thread, assistant_id="elsewhere",
                    request={"kind": "start", "input": {}}, created_at=now, updated_at=now)
    runs.add(run, exclusive=True)
    made += 1
print(made, flush=True)
"""
"""Another process writing the sessions and run files as fast as it can until told to stop: a
session and a run of a graph no worker here drives, each its own transaction; how many it made."""


def test_runs_go_whole_while_another_process_writes_the_same_sessions_and_run_files(tmp_path: Path) -> None:
    """Each store step of a run tries in place and, meeting the other process's write, is undone and
    run again in the store pool: every run ends once, its trail whole, and the other process's every
    write is kept."""
    directory = tmp_path / "sessions"
    manager = SessionManager(directory)
    register(manager)
    runs = open_store(f"sqlite:{directory}", kind="runs")
    stop = tmp_path / "stop"
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(directory / SESSIONS_FILE),
                               str(directory / RUNS_FILE), str(stop)], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
        queued = [runs.add(_start(manager.create(ODD).thread_id), exclusive=True) for _ in range(12)]

        def _as_they_stand() -> list[RunRecord]:
            return [runs.get(run.thread_id, run.run_id) for run in queued]

        async def drive() -> tuple[list[RunRecord], list[str]]:
            worker = RunWorker(manager, runs, Progress())
            with thread_trips() as trips:
                worker.start()
                try:
                    ended = await asyncio.to_thread(_as_they_stand)
                    while not all(run.ended for run in ended):
                        await asyncio.sleep(0.05)
                        ended = await asyncio.to_thread(_as_they_stand)
                finally:
                    await worker.stop()
                    await manager.aclose()
            return ended, trips.names()

        ended, sent = asyncio.run(asyncio.wait_for(drive(), timeout=120))  # bounds a hang; measures nothing
        stop.touch()
        made = int(writer.communicate(timeout=120)[0].strip())
        assert {run.status for run in ended} == {"success"}
        for run in ended:
            trail = manager.audit(run.thread_id)
            assert [e.kind for e in trail].count("claimed") == 1
            assert [e.node for e in trail if e.kind == "node"] == ["answer_oddly"]
            assert run.end_seq == trail[-1].seq
        assert set(sent) <= {"_due", "_start_turn", "_record_and_settle", "_finished", "_end", "_renew"}
        theirs = manager.list("created")  # the other process's sessions and runs, all kept
        assert made > 0 and len(theirs) == made and {session.graph for session in theirs} == {"elsewhere"}
        assert all(len(runs.of_thread(session.thread_id, status="pending")) == 1 for session in theirs)
    finally:
        stop.touch()
        if writer.poll() is None:
            writer.kill()
        runs.close()
        manager.close()
