"""LISTEN/NOTIFY: a write to a thread's audit trail or trace, by another connection or process,
wakes whoever waits on that thread (or on any thread); an SSE stream in this process follows a
run that another process executes, every entry once and in order."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from notifications import woken_by
from session_procs import Child

from grapharc.runs.records import RunRecord
from grapharc.server.api.context import ApiContext
from grapharc.server.api.streaming import run_events
from grapharc.session import SessionManager
from grapharc.stores import open_store
from grapharc.trace.writer import TraceWriter

WORKER_A = Path(__file__).with_name("stream_child.py")


def test_a_write_by_another_connection_wakes_a_reader_waiting_on_that_thread_only(postgres_uri):
    waiter, writer = open_store(postgres_uri, kind="sessions"), open_store(postgres_uri, kind="sessions")
    try:
        for thread in ("t1", "t2"):
            writer.create(thread, "chain", time.time())

        async def scenario() -> None:
            assert await woken_by(waiter, "t1", lambda: writer.post_event("t1", "poke", {}, time.time()))
            with TraceWriter(postgres_uri) as trace:
                assert await woken_by(waiter, "t2", lambda: trace.emit(
                    {"phase": "note", "run_id": "r", "thread_id": "t2"}))
            other = asyncio.create_task(waiter.wait_for_change("t2", 1.0))
            await asyncio.to_thread(writer.post_event, "t1", "poke", {}, time.time())
            assert await other is False  # a write to t1 is not t2's business

        asyncio.run(scenario())
    finally:
        waiter.close()
        writer.close()


def test_a_reader_waiting_on_any_thread_is_woken_by_a_write_to_each(postgres_uri):
    waiter, writer = open_store(postgres_uri, kind="sessions"), open_store(postgres_uri, kind="sessions")
    try:
        for thread in ("t1", "t2"):
            writer.create(thread, "chain", time.time())

        async def scenario() -> None:
            for thread in ("t1", "t2"):
                poke = lambda t=thread: writer.post_event(t, "poke", {}, time.time())  # noqa: E731
                assert await woken_by(waiter, None, poke)
            assert await waiter.wait_for_any_change(0.2) is False  # nothing written meanwhile

        asyncio.run(scenario())
    finally:
        waiter.close()
        writer.close()


def test_a_stream_here_follows_a_run_another_process_executes(postgres_uri, manager: SessionManager,
                                                              monkeypatch):
    thread = manager.create("chain").thread_id
    wakes: list[bool] = []
    wait_for_change = manager.wait_for_change

    async def counted(thread_id: str, timeout: float) -> bool:
        wakes.append(await wait_for_change(thread_id, timeout))
        return wakes[-1]

    monkeypatch.setattr(manager, "wait_for_change", counted)
    runs = open_store(postgres_uri, kind="runs")
    now = time.time()
    runs.add(RunRecord("r1", thread, "chain", {}, now, now, stream_modes=("events",)), exclusive=True)
    run = runs.claim_next("worker-a", now, 600.0, ["chain"])  # the run as worker A holds it
    assert run is not None and runs.begin("r1", "worker-a", 0)
    ctx = ApiContext(manager, runs)

    async def follow() -> tuple[list[dict[str, Any]], list[float]]:
        received, delays = [], []
        worker = Child([sys.executable, str(WORKER_A), postgres_uri, thread])

        async def worker_done() -> tuple[int, str, str]:
            try:
                return await asyncio.to_thread(worker.finish)
            finally:  # worker A is done: its run's record ends, the stream reads what is left and ends
                end_seq = manager.audit(thread)[-1].seq
                runs.finish("r1", "worker-a", "success", time.time(), end_seq=end_seq)

        finished = asyncio.create_task(worker_done())
        async for event in run_events(ctx, run, ["updates", "events"]):
            received.append(event)
            if event["event"] == "events":
                delays.append(time.time() - json.loads(event["data"])["metadata"]["at"])
        code, _out, err = await finished
        assert code == 0, err
        return received, delays

    try:
        received, delays = asyncio.run(follow())
    finally:
        runs.close()

    trail = [entry.seq for entry in manager.audit(thread)]
    streamed = [int(e["id"].split("-")[0]) for e in received if e["event"] == "events"]
    assert streamed == trail  # every entry of the trail, once, in order
    updates = [next(iter(json.loads(e["data"]))) for e in received if e["event"] == "updates"]
    assert updates == ["n1", "n2", "n3", "n4"]
    assert received[0]["event"] == "metadata" and received[-1]["event"] == "end"
    assert True in wakes  # woken by worker A's writes, not only by the poll
    print(f"audit write to SSE receipt across processes: {len(delays)} events, "
          f"median {sorted(delays)[len(delays) // 2] * 1000:.1f} ms, max {max(delays) * 1000:.1f} ms")
