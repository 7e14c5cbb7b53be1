"""``OneTripSqliteSaver``: one trip to its connection's thread per read, write or page, and the same
checkpoint tuples as LangGraph's ``AsyncSqliteSaver`` reading the same file. (LangGraph's own
conformance suite runs against it through ``test_checkpoints.py``'s kit.)"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing, asynccontextmanager, closing
from pathlib import Path
from typing import Any, TypedDict

import aiosqlite
import pytest
from langgraph.checkpoint.conformance.test_utils import (
    generate_checkpoint,
    generate_config,
    generate_metadata,
)
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph

from grapharc.session.errors import LeaseLostError
from grapharc.session.fencing import Leases, fence
from grapharc.session.lease import Lease
from grapharc.sqlite.one_trip_saver import LIST_PAGE, OneTripSqliteSaver
from grapharc.testing.fences import engaged_fence, lost_fence
from grapharc.testing.langgraph_suite import run_langgraph_suite
from grapharc.testing.thread_trips import thread_trips


class Counter(TypedDict):
    count: int


def _chain(saver: Any, nodes: int) -> Any:
    """A LangGraph chain of ``nodes`` nodes, each adding one, checkpointed by ``saver``."""
    graph = StateGraph(Counter)
    names = [f"n{i}" for i in range(nodes)]
    for name in names:
        graph.add_node(name, lambda state: {"count": state["count"] + 1})
    for a, b in zip([START, *names], [*names, END], strict=True):
        graph.add_edge(a, b)
    return graph.compile(checkpointer=saver)


@asynccontextmanager
async def _opened(path: Path) -> AsyncIterator[OneTripSqliteSaver]:
    async with OneTripSqliteSaver.open(path) as saver:
        await saver.asetup()
        yield saver


def _trips(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the functions sent to the saver's connection thread from now on."""
    sent: list[str] = []
    original = OneTripSqliteSaver._on_thread

    async def counting(self: Any, work: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        sent.append(getattr(work, "__name__", repr(work)))
        return await original(self, work, *args, **kwargs)

    monkeypatch.setattr(OneTripSqliteSaver, "_on_thread", counting)
    return sent


def _same(a: Any, b: Any) -> None:
    assert (a.config, a.checkpoint, a.metadata, a.parent_config, a.pending_writes) == \
        (b.config, b.checkpoint, b.metadata, b.parent_config, b.pending_writes)


def test_a_read_a_write_and_a_limited_listing_run_on_the_loop_with_no_trip(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where nothing can make the loop wait, LangGraph's reads and writes take no trip at all (a
    three-node run made 11, one per call, before)."""
    async def main() -> tuple[list[str], Any, Any]:
        async with _opened(tmp_path / "cp.db") as saver:
            config = {"configurable": {"thread_id": "t"}}
            sent = _trips(monkeypatch)
            await _chain(saver, 3).ainvoke({"count": 0}, config)
            latest = await saver.aget_tuple(config)
            assert latest is not None
            await saver.aput_writes(latest.config, [("count", 9), ("other", 1)], "task-1")
            listed = [t async for t in saver.alist(config, limit=4)]
            return sent, await asyncio.to_thread(saver.get_tuple, config), listed

    sent, saved, listed = asyncio.run(main())
    assert sent == []
    assert saved.checkpoint["channel_values"]["count"] == 3
    assert saved.pending_writes == [("task-1", "count", 9), ("task-1", "other", 1)]
    assert len(listed) == 4 and listed[0].config == saved.config


def test_a_write_to_a_file_busy_with_another_connection_waits_on_the_thread_not_the_loop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process's write holds the file's write lock: the write answers busy at once on the
    loop, is sent to the connection's thread, and waits there; the loop runs on meanwhile."""
    async def main() -> tuple[list[str], Any]:
        async with _opened(tmp_path / "cp.db") as saver:
            config = {"configurable": {"thread_id": "t"}}
            await _chain(saver, 1).ainvoke({"count": 0}, config)
            latest = await saver.aget_tuple(config)
            assert latest is not None
            sent = _trips(monkeypatch)
            with closing(sqlite3.connect(tmp_path / "cp.db", isolation_level=None)) as other:
                other.execute("BEGIN IMMEDIATE")
                writing = asyncio.create_task(saver.aput_writes(latest.config, [("count", 5)], "task"))
                while sent != ["put_writes"]:  # the loop is not held: this task keeps running
                    await asyncio.sleep(0.01)
                assert not writing.done()
                other.execute("COMMIT")
            await writing
            return sent, await saver.aget_tuple(config)

    sent, again = asyncio.run(main())
    assert sent == ["put_writes"]
    assert again is not None and again.pending_writes == [("task", "count", 5)]


def test_the_busy_timeout_is_set_only_when_a_call_runs_on_the_other_side_of_the_last(
        tmp_path: Path) -> None:
    """Calls off the loop wait for a busy file and calls in place never do, as before; the PRAGMA
    that sets it runs only when a call runs where the last did not (six for these six calls
    before: set and set back around each call off the loop)."""
    async def main() -> list[str]:
        async with _opened(tmp_path / "cp.db") as saver:
            config = {"configurable": {"thread_id": "t"}}
            await _chain(saver, 1).ainvoke({"count": 0}, config)
            seen: list[str] = []
            saver.conn.set_trace_callback(seen.append)
            for _ in range(3):
                assert await asyncio.to_thread(saver.get_tuple, config) is not None
            for _ in range(3):
                assert await saver.aget_tuple(config) is not None
            saver.conn.set_trace_callback(None)
            return seen

    seen = asyncio.run(main())
    pragmas = [i for i, statement in enumerate(seen) if statement.startswith("PRAGMA busy_timeout")]
    assert [seen[i] for i in pragmas] == ["PRAGMA busy_timeout = 5000", "PRAGMA busy_timeout = 0"]
    reads = [i for i, statement in enumerate(seen) if "FROM checkpoints" in statement]
    assert len(reads) == 6
    assert pragmas[0] < reads[0] and reads[2] < pragmas[1] < reads[3]  # the reads in place wait for nothing


def test_a_call_while_another_thread_uses_the_connection_is_sent_to_the_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sync caller on another thread holds the connection's lock: the loop does not wait for it."""
    async def main() -> tuple[list[str], Any]:
        async with _opened(tmp_path / "cp.db") as saver:
            config = {"configurable": {"thread_id": "t"}}
            await _chain(saver, 1).ainvoke({"count": 0}, config)
            sent = _trips(monkeypatch)
            saver.lock.acquire()
            reading = asyncio.create_task(saver.aget_tuple(config))
            while sent != ["get_tuple"]:
                await asyncio.sleep(0.01)
            saver.lock.release()
            return sent, await reading

    sent, read = asyncio.run(main())
    assert sent == ["get_tuple"] and read is not None


def test_a_listing_is_one_trip_a_page_with_no_trip_of_its_own_to_open_or_close_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn's audit scan lists a few checkpoints after each node: one trip, not three."""
    async def main() -> list[list[str]]:
        async with _opened(tmp_path / "cp.db") as saver:
            await _chain(saver, 2 * LIST_PAGE).ainvoke({"count": 0}, {"configurable": {"thread_id": "t"}})
            config = {"configurable": {"thread_id": "t"}}
            sent, trips = _trips(monkeypatch), []
            for listing in (saver.alist(config, filter={"step": 3}), saver.alist(config), saver.alist(None)):
                assert [t async for t in listing]
                trips.append(sent[:])
                sent.clear()
            async with aclosing(saver.alist(config)) as listing:
                async for _ in listing:
                    break  # the reader stops early: closing the listing closes its cursor
            trips.append(sent[:])
            return trips

    few, many, every, stopped = asyncio.run(main())
    assert few == ["_page"]
    pages = (2 * LIST_PAGE + 2) // LIST_PAGE + 1  # 2 * LIST_PAGE + 2 checkpoints (input and start)
    assert many == every == ["_page"] * pages, many
    assert stopped == ["_page", "_close"]


def test_it_reads_back_what_asyncsqlitesaver_reads_from_the_same_file(tmp_path: Path) -> None:
    async def main() -> None:
        async with _opened(tmp_path / "cp.db") as ours, aiosqlite.connect(tmp_path / "cp.db") as connection:
            theirs = AsyncSqliteSaver(connection)
            chain = _chain(ours, 2 * LIST_PAGE)
            for thread in ("a", "b"):
                await chain.ainvoke({"count": 0}, {"configurable": {"thread_id": thread}})
            config = {"configurable": {"thread_id": "a"}}
            latest = await ours.aget_tuple(config)
            assert latest is not None and latest.checkpoint["channel_values"]["count"] == 2 * LIST_PAGE
            await ours.aput_writes(latest.config, [("count", 7)], "pending-task", "~path")
            asks: list[dict[str, Any]] = [
                {}, {"limit": 3}, {"limit": 0}, {"limit": -1}, {"limit": LIST_PAGE},
                {"before": latest.config}, {"filter": {"source": "loop"}},
                {"filter": {"step": 4}, "limit": 1},
            ]
            for thread_config in (config, None):
                for ask in asks:
                    mine = [t async for t in ours.alist(thread_config, **ask)]
                    base = [t async for t in theirs.alist(thread_config, **ask)]
                    assert len(mine) == len(base), ask
                    for a, b in zip(mine, base, strict=True):
                        _same(a, b)
            assert len([t async for t in ours.alist(None)]) > 2 * LIST_PAGE  # more than one page
            for named in (config, latest.config, latest.parent_config,
                          {"configurable": {"thread_id": "a", "checkpoint_id": "no-such-id"}},
                          {"configurable": {"thread_id": "nobody"}}):
                mine_one, base_one = await ours.aget_tuple(named), await theirs.aget_tuple(named)
                if base_one is None:
                    assert mine_one is None
                else:
                    assert mine_one is not None
                    _same(mine_one, base_one)
            assert (await ours.aget_tuple(latest.config)).pending_writes[-1] == ("pending-task", "count", 7)

    asyncio.run(main())


def test_a_failed_write_raises_and_leaves_the_next_call_working(tmp_path: Path) -> None:
    def refuse(sql: str) -> None:
        with closing(sqlite3.connect(tmp_path / "cp.db")) as other:
            other.execute(sql)
            other.commit()

    async def main() -> None:
        async with _opened(tmp_path / "cp.db") as saver:
            config = {"configurable": {"thread_id": "t"}}
            await _chain(saver, 1).ainvoke({"count": 0}, config)
            refuse("CREATE TRIGGER refuse BEFORE INSERT ON writes "
                   "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
            latest = await saver.aget_tuple(config)
            assert latest is not None
            with pytest.raises(Exception, match="refused by the test"):
                await saver.aput_writes(latest.config, [("count", 1)], "task")
            refuse("DROP TRIGGER refuse")
            await saver.aput_writes(latest.config, [("count", 2)], "task")
            again = await saver.aget_tuple(config)
            assert again is not None and again.pending_writes == [("task", "count", 2)]

    asyncio.run(main())


@pytest.mark.parametrize("on_loop", [True, False])
def test_fenced_it_checks_each_writes_lease_with_the_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           on_loop: bool) -> None:
    """``fence`` asks the saver to fence itself: a write and its lease check run together, in place
    on the loop where the check may run there (``Leases.reads_on_loop``), else in one trip to the
    connection's thread (``FencedSaver`` took one more, to a worker thread, per write)."""
    checked: list[int] = []
    leases = Leases(lambda lease: checked.append(threading.get_ident()) is None, reads_on_loop=on_loop)
    leases.held["t"] = Lease("t", "runner", "token", 60.0)

    async def main() -> tuple[list[str], list[Any]]:
        async with _opened(tmp_path / "cp.db") as saver:
            fenced = fence(saver, leases)
            assert isinstance(fenced, OneTripSqliteSaver)
            assert (fenced.conn, fenced.lock, fenced.turns) == (saver.conn, saver.lock, saver.turns)
            sent = _trips(monkeypatch)
            with thread_trips() as hops:
                await _chain(fenced, 3).ainvoke({"count": 0}, {"configurable": {"thread_id": "t"}})
            return sent, hops

    sent, hops = asyncio.run(main())
    writes = sent.count("put") + sent.count("put_writes")
    assert len(checked) >= 8 and hops == []  # a checkpoint and the writes of each step
    assert len(set(checked)) == 1
    if on_loop:
        assert writes == 0 and checked[0] == threading.get_ident()  # asyncio.run's loop: this thread
    else:
        assert writes == len(checked) and threading.get_ident() not in checked  # the connection's thread


def test_fenced_after_its_lease_was_lost_it_writes_nothing_and_others_pass(tmp_path: Path) -> None:
    async def main() -> tuple[list[Any], Any]:
        async with _opened(tmp_path / "cp.db") as saver:
            stored = await saver.aput(generate_config("lost"), generate_checkpoint(), generate_metadata(), {})
            stale = saver.fenced_by(lost_fence("lost"))
            with pytest.raises(LeaseLostError, match="stale-runner"):
                await stale.aput(stored, generate_checkpoint(), generate_metadata(step=1), {})
            with pytest.raises(LeaseLostError, match="stale-runner"):
                await stale.aput_writes(stored, [("channel", "late")], "task-1")
            unleased = generate_config("unleased")
            assert await stale.aput(unleased, generate_checkpoint(), generate_metadata(), {})
            kept = await saver.aget_tuple(stored)
            return [t.config async for t in saver.alist(generate_config("lost"))], kept

    listed, kept = asyncio.run(main())
    assert len(listed) == 1 and kept is not None and kept.pending_writes == []


def test_fenced_it_passes_langgraphs_conformance_suite(tmp_path: Path) -> None:
    leases, checked = engaged_fence()

    @asynccontextmanager
    async def opened() -> AsyncIterator[Any]:
        async with _opened(tmp_path / "suite.db") as saver:
            yield saver.fenced_by(leases)

    run_langgraph_suite("fenced one-trip saver", opened)
    assert checked, "the suite's writes never reached the fence"


def test_pruning_deleting_runs_and_copying_are_one_trip_each(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    async def main() -> tuple[list[str], list[int]]:
        async with _opened(tmp_path / "cp.db") as saver:
            config = {"configurable": {"thread_id": "t"}, "metadata": {"run_id": "r"}}
            await _chain(saver, 3).ainvoke({"count": 0}, config)
            sent = _trips(monkeypatch)
            await saver.acopy_thread("t", "copy")
            await saver.aprune(["t"])
            await saver.adelete_for_runs(["r"])
            held = [len([c async for c in saver.alist({"configurable": {"thread_id": thread}})])
                    for thread in ("t", "copy")]
            return sent, held

    sent, held = asyncio.run(main())
    assert sent == ["copy_thread", "prune", "delete_for_runs", "_page", "_page"]
    assert held == [0, 0]  # the kept checkpoint, and the copies, were the run's too


def test_its_sync_methods_refuse_the_event_loops_thread_and_work_from_any_other(tmp_path: Path) -> None:
    async def main() -> tuple[Any, Any]:
        async with _opened(tmp_path / "cp.db") as saver:
            config = {"configurable": {"thread_id": "t"}}
            await _chain(saver, 1).ainvoke({"count": 0}, config)
            with pytest.raises(asyncio.InvalidStateError, match="use the async ones"):
                saver.get_tuple(config)
            from_a_thread = await asyncio.to_thread(saver.get_tuple, config)
            return from_a_thread, await saver.aget_tuple(config)

    from_a_thread, from_the_loop = asyncio.run(main())
    assert from_a_thread is not None and from_a_thread.config == from_the_loop.config


def test_fenced_after_its_lease_was_lost_it_prunes_copies_and_deletes_nothing_of_the_thread(
        tmp_path: Path) -> None:
    async def main() -> list[int]:
        async with _opened(tmp_path / "cp.db") as saver:
            for thread in ("lost", "other"):
                config = {"configurable": {"thread_id": thread}, "metadata": {"run_id": f"run-{thread}"}}
                await _chain(saver, 2).ainvoke({"count": 0}, config)
            stale = saver.fenced_by(lost_fence("lost"))
            refusals = [stale.aprune(["other", "lost"]), stale.aprune(["lost"], strategy="delete"),
                        stale.adelete_thread("lost"), stale.acopy_thread("other", "lost"),
                        stale.adelete_for_runs(["run-other", "run-lost"])]
            for refused in refusals:
                with pytest.raises(LeaseLostError, match="stale-runner"):
                    await refused
            await stale.acopy_thread("lost", "copy")  # reading the lost thread writes nothing of it
            await stale.adelete_for_runs(["run-other"])
            return [len([c async for c in saver.alist({"configurable": {"thread_id": thread}})])
                    for thread in ("lost", "other", "copy")]

    lost, other, copy = asyncio.run(main())
    assert lost == copy > 1 and other == 0
