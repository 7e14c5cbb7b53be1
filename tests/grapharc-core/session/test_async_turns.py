"""Async turns: a server drives many sessions on one event loop, with no thread per session."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing

import pytest
from session_graphs import Crowd, Ledger, register_all
from session_procs import session_op, wait_for

from grapharc import GraphARC
from grapharc.runtime.graph import END, START
from grapharc.session import SessionManager, ThreadNotPausedError
from grapharc.session.errors import LeaseLostError
from grapharc.sqlite.files import SESSIONS_FILE
from grapharc.stores import offload
from grapharc.testing.busy_files import busy_in_place
from grapharc.testing.thread_trips import thread_trips


def run(coro):
    return asyncio.run(coro)


@pytest.fixture
def amanager(directory):
    made = SessionManager(directory, lease_seconds=5.0)
    register_all(made)
    return made


def test_many_async_sessions_share_one_loop_without_a_thread_each(amanager):
    pool = offload.STORE_THREADS  # the store calls' pool (the crowd's nodes are async)
    sessions = pool + 10
    baseline = threading.active_count()

    async def scenario():
        Crowd.arrived, Crowd.release = 0, asyncio.Event()
        turns = [asyncio.create_task(amanager.astart("crowd", thread_id=f"c{i}")) for i in range(sessions)]
        while Crowd.arrived < sessions:
            await asyncio.sleep(0.01)
        during = threading.active_count()
        Crowd.release.set()
        paused = await asyncio.gather(*turns)
        done = await asyncio.gather(*(amanager.aresume(s.thread_id, s.holds[0].approval_id, "approved",
                                                       decider="ana") for s in paused))
        await amanager.aclose()
        return during, paused, done

    during, paused, done = run(scenario())
    assert during - baseline <= pool + 1  # the store pool and the async saver's connection thread
    assert {s.status for s in paused} == {"paused"} and {s.status for s in done} == {"completed"}
    assert amanager.values("c0")["log"] == ["gather", "aask:approved"]


def test_an_async_start_is_resumed_by_a_sync_process_and_the_other_way_round(amanager, directory, reap):
    async def start():
        paused = await amanager.astart("interview", thread_id="mixed")
        await amanager.aclose()
        return paused

    paused = run(start())
    approval = paused.holds[0].approval_id
    code, done = reap(session_op(directory, "resume", "mixed", approval, "approved")).result()
    assert code == 0 and done["outcome"] == "prepare,ask:approved,pay"

    code, other = reap(session_op(directory, "start", "interview", "mixed-2")).result()

    async def resume():
        finished = await amanager.aresume("mixed-2", other["holds"][0]["approval_id"], "rejected",
                                          decider="ana")
        await amanager.aclose()
        return finished

    assert run(resume()).outcome == "prepare,ask:rejected,pay"


def test_an_async_resume_of_a_thread_that_is_not_paused_is_refused(amanager):
    async def scenario():
        try:
            asked = (await amanager.astart("interview", thread_id="twice")).holds[0].approval_id
            await amanager.aresume("twice", asked, "approved", decider="ana")
            with pytest.raises(ThreadNotPausedError, match="thread twice is not paused"):
                await amanager.aresume("twice", asked, "approved", decider="ana")
        finally:
            await amanager.aclose()

    run(scenario())
    assert amanager.get("twice").status == "completed"


def test_an_async_recovery_takes_over_a_killed_runner(tmp_path, amanager, directory, marks, reap):
    ready = tmp_path / "ready"
    env = {"GRAPHARC_TEST_BLOCK_AT": "n2", "GRAPHARC_TEST_READY": str(ready),
           "GRAPHARC_TEST_LEASE": "1"}
    runner = reap(session_op(directory, "start", "chain", "ak", env=env))
    wait_for(ready, runner)
    runner.kill()
    while amanager.get("ak").lease_live(time.time()):
        time.sleep(0.02)

    async def recover():
        finished = await amanager.arecover("ak")
        await amanager.aclose()
        return finished

    assert run(recover()).status == "completed"
    assert sorted((e.step, e.node) for e in amanager.audit("ak") if e.kind == "node") == [
        (1, "n1"), (2, "n2"), (3, "n3"), (4, "n4")]


def test_an_async_turn_over_sqlite_takes_no_trip_to_the_store_pool(amanager):
    """Under a server's load each trip to a worker thread costs the loop more than the store call
    it carries: over SQLite a four-node turn's claim, record and settling, and ending (three trips
    before) run on the loop, since nothing in them waits there; its lease checks ride along with its
    checkpoint writes, and each node's audit with the scan that finds it, on the checkpointer's own
    thread."""
    amanager.create("chain", thread_id="trips")

    async def scenario():
        await amanager._async_checkpointer()  # opened before counting: once per loop
        try:
            with thread_trips() as trips:
                return await amanager.arun("trips", {}), trips.names()
        finally:
            await amanager.aclose()

    ended, names = run(scenario())
    assert ended.status == "completed"
    assert [name for name in names if name != "_renew"] == []  # a heartbeat, on a slow day
    assert [e.node for e in amanager.audit("trips") if e.kind == "node"] == ["n1", "n2", "n3", "n4"]


def test_an_async_turns_store_steps_meeting_a_busy_sessions_file_are_undone_and_run_in_the_pool(
        amanager, directory):
    """Another process writing the sessions file as each step of the turn tries it in place: the step
    answers busy at once, nothing of it is written, and it runs again in the store pool (one trip per
    step, as before steps ran in place), where it waits; the trail is the same."""
    amanager.create("chain", thread_id="busy")

    async def scenario():
        await amanager._async_checkpointer()
        try:
            with busy_in_place([directory / SESSIONS_FILE]) as attempts:
                return await amanager.arun("busy", {}), attempts
        finally:
            await amanager.aclose()

    ended, attempts = run(scenario())
    steps = ["_start_turn", "_record_and_settle", "_finished"]
    assert ended.status == "completed"
    assert attempts.tried == steps
    assert [name for name in attempts.sent if name != "_renew"] == steps
    assert [e.node for e in amanager.audit("busy") if e.kind == "node"] == ["n1", "n2", "n3", "n4"]
    assert [e.kind for e in amanager.audit("busy")].count("claimed") == 1


def test_an_async_turn_that_lost_its_lease_writes_no_checkpoint_after_it(amanager, directory):
    """The async SQLite saver's own fence, through the session layer: the thread is taken over
    while its first node runs (the row's lease token replaced, as a runner reclaiming it would)
    and the turn's next checkpoint write is refused, so nothing after the takeover is saved."""
    def takes_over(state: Ledger) -> dict:
        with closing(sqlite3.connect(directory / SESSIONS_FILE)) as db, db:
            db.execute("UPDATE sessions SET lease_token = 'another-runner' WHERE thread_id = 'taken'")
        return {"log": ["takes_over"]}

    graph = GraphARC(Ledger, name="taken-over")
    graph.add_node("takes_over", takes_over, writes={"log"})
    graph.add_node("after", lambda state: {"log": ["after"]}, writes={"log"})
    graph.add_edge(START, "takes_over")
    graph.add_edge("takes_over", "after")
    graph.add_edge("after", END)
    amanager.register(graph)
    amanager.create("taken-over", thread_id="taken")

    async def scenario():
        try:
            await amanager.arun("taken", {})
        finally:
            await amanager.aclose()

    with pytest.raises(LeaseLostError, match="lost its lease on thread taken"):
        run(scenario())
    latest = next(iter(amanager.history("taken")))  # saved before the takeover, and nothing since
    assert latest.next == ("takes_over",) and latest.values["log"] == []
    assert [task.result for task in latest.tasks] == [None]  # the node's writes were refused too


def test_a_heartbeat_renews_the_lease_while_every_node_thread_is_busy(directory):
    """Store calls have a pool of their own: a sync node holding the loop's only default-executor
    thread does not hold back the heartbeat: the lease is renewed again and again while the node
    holds it (queued behind the node, as it was in the shared pool, no renewal came until the node
    let go, and the lease lapsed after one second). The test waits for the renewals themselves,
    not for a length of time: a busy machine may delay one, which is no lapse of this design."""
    manager = SessionManager(directory, lease_seconds=1.0)
    entered, release = threading.Event(), threading.Event()

    def hold(state: Ledger) -> dict:
        entered.set()
        release.wait(timeout=600)  # longer than the wait for renewals below can take
        return {"log": ["held"]}

    graph = GraphARC(Ledger, name="holder")
    graph.add_node("hold", hold, writes={"log"})
    graph.add_edge(START, "hold")
    graph.add_edge("hold", END)
    manager.register(graph)
    manager.create("holder", thread_id="busy")

    def lease_expires() -> float:
        with closing(sqlite3.connect(directory / SESSIONS_FILE)) as db:
            (expires,) = db.execute("SELECT lease_expires_at FROM sessions "
                                    "WHERE thread_id = 'busy'").fetchone()
        return float(expires)

    async def scenario():
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=1))
        turn = asyncio.create_task(manager.arun("busy", {}))
        renewed = False
        try:
            while not entered.is_set():
                await asyncio.sleep(0.01)
            seen = [lease_expires()]
            give_up = time.monotonic() + 60  # a bound for the broken case (no renewal at all)
            while len(seen) < 4 and time.monotonic() < give_up:  # three renewals: a lease's length
                await asyncio.sleep(0.02)
                if (expires := lease_expires()) > seen[-1]:
                    seen.append(expires)
            renewed = len(seen) == 4 and entered.is_set() and not release.is_set()
        finally:
            release.set()
        ended = await turn
        await manager.aclose()
        return renewed, ended

    renewed, ended = run(scenario())
    assert renewed, "the heartbeat did not renew the lease while the node held the default executor"
    assert ended.status == "completed" and manager.values("busy")["log"] == ["held"]


@pytest.mark.parametrize("values_read", [True, False])
def test_an_async_turns_ledger_and_each_audit_scan_take_one_trip_to_the_checkpointers_thread(
        amanager, monkeypatch, values_read):
    """The run's start marker (read the latest checkpoint, pin the marker) and its end (pin the end
    marker, read whether nodes are still due) each went to the async saver's thread once per call,
    five trips, now two; each node's audit scan (the newest checkpoint, then a page under it) two,
    now one, whether a values reader wants the newest checkpoint prepared or not, and the audit
    entries it finds are written in that same trip."""
    from grapharc.session.turn_options import TurnOptions
    from grapharc.sqlite.one_trip_saver import OneTripSqliteSaver

    sent: list[str] = []
    original = OneTripSqliteSaver._on_thread

    async def counting(self, work, *args, **kwargs):
        sent.append(getattr(work, "__name__", repr(work)))
        return await original(self, work, *args, **kwargs)

    amanager.create("chain", thread_id="ledger")

    async def scenario():
        await amanager._async_checkpointer()
        monkeypatch.setattr(OneTripSqliteSaver, "_on_thread", counting)
        try:
            return await amanager.arun("ledger", {}, options=TurnOptions(values_read=values_read))
        finally:
            await amanager.aclose()

    assert run(scenario()).status == "completed"
    assert sent.count("open") == 1 and sent.count("_close_ledger") == 1
    # the other trips are the audit scan after each node, recording what it found (``_scan``, one
    # trip each); LangGraph's own reads and writes (its first read, a write per checkpoint and node)
    # run on the loop, with no trip (``OneTripSqliteSaver._in_place``)
    assert sorted(sent) == sorted(["open", "_close_ledger", *["_scan"] * 4]), sent
    assert amanager.values("ledger")["log"] == ["n1", "n2", "n3", "n4"]


def test_settling_a_turn_prepares_no_state_snapshot(amanager, manager, monkeypatch):
    """Settling after each pass reads where the thread stands from its newest checkpoint's named
    tasks (``grapharc.session.standing``), and the run's end marker whether nodes are still due
    from its planned tasks (``grapharc.runtime.planned``): a chain's turn, sync or async, has
    LangGraph prepare no snapshot (two per pass before); nor, with a reader rendering values from
    its scans, do the scans (``named(values=True)``: nine a turn of this chain before)."""
    from langgraph.pregel import Pregel

    from grapharc.session.turn_options import TurnOptions

    prepared: list[str] = []
    original = Pregel._prepare_state_snapshot

    def counted(self, *args, **kwargs):
        prepared.append(self.name)
        return original(self, *args, **kwargs)

    for thread in ("a", "v"):
        amanager.create("chain", thread_id=thread)
    manager.create("chain", thread_id="s")
    monkeypatch.setattr(Pregel, "_prepare_state_snapshot", counted)

    async def scenario():
        try:
            return [await amanager.arun("a", {}, options=TurnOptions(values_read=False)),
                    await amanager.arun("v", {}, options=TurnOptions(values_read=True))]
        finally:
            await amanager.aclose()

    assert [session.status for session in run(scenario())] == ["completed", "completed"]
    assert manager.run("s", {}).status == "completed"
    assert prepared == []
    assert (amanager.values("a")["log"] == amanager.values("v")["log"] == manager.values("s")["log"]
            == ["n1", "n2", "n3", "n4"])
