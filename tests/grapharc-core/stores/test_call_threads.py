"""CallThreads: blocking calls run on threads of their own, each result or exception handed back to
the awaiting loop; one thread keeps the calls' order, several run them side by side; a call whose
caller stopped waiting before it began never runs. And offload.to_thread runs in the caller's context."""

import asyncio
import contextvars
import threading

import pytest

from grapharc.stores import offload
from grapharc.stores.call_threads import CallThreads

DEADLINE = 10.0


def test_results_and_exceptions_come_back_to_the_caller_and_one_thread_keeps_the_order():
    threads = CallThreads("test-one")
    seen: list[int] = []

    def record(n: int) -> int:
        seen.append(n)
        return n * 2

    def boom() -> None:
        raise ValueError("the call's own error")

    async def scenario() -> list[int]:
        doubled = await asyncio.gather(*(threads.run(lambda n=n: record(n)) for n in range(50)))
        with pytest.raises(ValueError, match="the call's own error"):
            await threads.run(boom)
        return list(doubled)

    try:
        assert asyncio.run(scenario()) == [n * 2 for n in range(50)]
        assert seen == list(range(50))
    finally:
        threads.stop()


def test_several_threads_run_calls_side_by_side():
    threads = CallThreads("test-several", 3)
    arrived = threading.Barrier(3, timeout=DEADLINE)  # breaks (raises) unless three calls overlap

    async def scenario() -> list[str]:
        return list(await asyncio.gather(*(threads.run(lambda: str(arrived.wait())) for _ in range(3))))

    try:
        assert sorted(asyncio.run(scenario())) == ["0", "1", "2"]
    finally:
        threads.stop()


def test_a_call_cancelled_before_it_began_never_runs():
    threads = CallThreads("test-cancel")
    gate = threading.Event()
    ran: list[str] = []

    async def scenario() -> None:
        first = asyncio.ensure_future(threads.run(lambda: gate.wait(DEADLINE)))
        second = asyncio.ensure_future(threads.run(lambda: ran.append("second")))
        await asyncio.sleep(0)  # both sent; the thread is held in the first
        second.cancel()
        gate.set()
        assert await first is True
        assert await threads.run(lambda: "after") == "after"  # the queue moved past the cancelled call

    try:
        asyncio.run(scenario())
        assert ran == []
    finally:
        threads.stop()


def test_offload_runs_the_call_in_the_callers_context():
    who: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")

    async def scenario() -> tuple[str, str]:
        who.set("the caller")
        return await offload.to_thread(who.get), await offload.to_thread(threading.current_thread)

    seen, thread = asyncio.run(scenario())
    assert seen == "the caller"
    assert thread.name.startswith("grapharc-store_") and thread is not threading.main_thread()


def test_only_stores_that_declare_it_are_read_on_the_loop(tmp_path):
    """SQLite's session, run and checkpoint stores say their reads may run on an event loop's thread;
    a store that says nothing (a network database's) is read in a trip to a thread."""
    from grapharc.stores import open_store

    kinds = ("sessions", "runs", "checkpoints")
    local = [open_store(f"sqlite:{tmp_path}/sessions", kind=kind) for kind in kinds]
    try:
        assert offload.reads_on_loop(*local)
        assert not offload.reads_on_loop(*local, object())
    finally:
        for store in local:
            store.close()
