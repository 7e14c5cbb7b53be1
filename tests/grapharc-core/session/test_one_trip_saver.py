"""``OneTripSqliteSaver``: one trip to aiosqlite's thread per read, write or page, and the same
checkpoint tuples as LangGraph's ``AsyncSqliteSaver`` reading the same file. (LangGraph's own
conformance suite runs against it through ``test_checkpoints.py``'s kit.)"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing, asynccontextmanager
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
from grapharc.testing.checkpointer_kit import engaged_fence, lost_fence, run_langgraph_suite
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


def _trips(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the functions sent to aiosqlite's thread from now on."""
    sent: list[str] = []
    original = aiosqlite.Connection._execute

    async def counting(self: Any, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        sent.append(getattr(fn, "__name__", repr(fn)))
        return await original(self, fn, *args, **kwargs)

    monkeypatch.setattr(aiosqlite.Connection, "_execute", counting)
    return sent


def _same(a: Any, b: Any) -> None:
    assert (a.config, a.checkpoint, a.metadata, a.parent_config, a.pending_writes) == \
        (b.config, b.checkpoint, b.metadata, b.parent_config, b.pending_writes)


def test_a_read_a_write_and_a_page_of_checkpoints_are_one_trip_each(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    async def main() -> tuple[list[str], list[str], list[str], list[str]]:
        async with aiosqlite.connect(tmp_path / "cp.db") as connection:
            saver = OneTripSqliteSaver(connection)
            await saver.setup()
            config = {"configurable": {"thread_id": "t"}}
            await _chain(saver, 3).ainvoke({"count": 0}, config)
            sent = _trips(monkeypatch)
            await saver.aget_tuple(config)
            read = sent[:]
            latest = await saver.aget_tuple(config)
            assert latest is not None
            sent.clear()
            await saver.aput_writes(latest.config, [("count", 9), ("other", 1)], "task-1")
            wrote = sent[:]
            sent.clear()
            listed = [t async for t in saver.alist(config, limit=4)]
            assert len(listed) == 4
            paged = sent[:]
            sent.clear()
            await _chain(saver, 3).ainvoke({"count": 0}, {"configurable": {"thread_id": "u"}})
            return read, wrote, paged, sent[:]

    read, wrote, paged, run = asyncio.run(main())
    assert read == ["_read_one"] and wrote == ["_write"]
    assert paged == ["_first_page"]
    # a three-node run: LangGraph's own reads and writes, a trip each (95 per turn of a session
    # went to the thread with the base class)
    assert 0 < len(run) <= 11, run
    assert set(run) <= {"_read_one", "_write", "_first_page", "_next_page", "_close"}, run


def test_a_listing_is_one_trip_a_page_with_no_trip_of_its_own_to_open_or_close_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn's audit scan lists a few checkpoints after each node: one trip, not three."""
    async def main() -> list[list[str]]:
        async with aiosqlite.connect(tmp_path / "cp.db") as connection:
            saver = OneTripSqliteSaver(connection)
            await saver.setup()
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
    assert few == ["_first_page"]
    pages = (2 * LIST_PAGE + 2) // LIST_PAGE + 1  # 2 * LIST_PAGE + 2 checkpoints (input and start)
    assert many == every == ["_first_page"] + ["_next_page"] * (pages - 1), many
    assert stopped == ["_first_page", "_close"]


def test_it_reads_back_what_asyncsqlitesaver_reads_from_the_same_file(tmp_path: Path) -> None:
    async def main() -> None:
        async with aiosqlite.connect(tmp_path / "cp.db") as connection:
            ours, theirs = OneTripSqliteSaver(connection), AsyncSqliteSaver(connection)
            await ours.setup()
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
    async def main() -> None:
        async with aiosqlite.connect(tmp_path / "cp.db") as connection:
            saver = OneTripSqliteSaver(connection)
            await saver.setup()
            config = {"configurable": {"thread_id": "t"}}
            await _chain(saver, 1).ainvoke({"count": 0}, config)
            await connection.execute("CREATE TRIGGER refuse BEFORE INSERT ON writes "
                                     "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
            await connection.commit()
            latest = await saver.aget_tuple(config)
            assert latest is not None
            with pytest.raises(Exception, match="refused by the test"):
                await saver.aput_writes(latest.config, [("count", 1)], "task")
            await connection.execute("DROP TRIGGER refuse")
            await connection.commit()
            await saver.aput_writes(latest.config, [("count", 2)], "task")
            again = await saver.aget_tuple(config)
            assert again is not None and again.pending_writes == [("task", "count", 2)]

    asyncio.run(main())


def test_fenced_it_checks_each_writes_lease_in_the_writes_own_trip(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``fence`` asks the saver to fence itself: a write and its lease check are one trip to the
    connection's thread (``FencedSaver`` took one more, to a worker thread, per write)."""
    checked: list[int] = []
    leases = Leases(lambda lease: checked.append(threading.get_ident()) is None)
    leases.held["t"] = Lease("t", "runner", "token", 60.0)

    async def main() -> tuple[list[str], list[Any]]:
        async with aiosqlite.connect(tmp_path / "cp.db") as connection:
            saver = OneTripSqliteSaver(connection)
            fenced = fence(saver, leases)
            assert isinstance(fenced, OneTripSqliteSaver) and fenced.lock is saver.lock
            await saver.setup()
            sent = _trips(monkeypatch)
            with thread_trips() as hops:
                await _chain(fenced, 3).ainvoke({"count": 0}, {"configurable": {"thread_id": "t"}})
            return sent, hops

    sent, hops = asyncio.run(main())
    writes = sent.count("_write")
    assert writes == len(checked) >= 8 and hops == []  # a checkpoint and the writes of each step
    assert len(set(checked)) == 1 and threading.get_ident() not in checked  # the connection's thread


def test_fenced_after_its_lease_was_lost_it_writes_nothing_and_others_pass(tmp_path: Path) -> None:
    async def main() -> tuple[list[Any], Any]:
        async with aiosqlite.connect(tmp_path / "cp.db") as connection:
            saver = OneTripSqliteSaver(connection)
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
        async with aiosqlite.connect(tmp_path / "suite.db") as connection:
            yield OneTripSqliteSaver(connection).fenced_by(leases)

    run_langgraph_suite("fenced one-trip saver", opened)
    assert checked, "the suite's writes never reached the fence"
