"""``OneTripSqliteSaver``: one trip to aiosqlite's thread per read, write or page, and the same
checkpoint tuples as LangGraph's ``AsyncSqliteSaver`` reading the same file. (LangGraph's own
conformance suite runs against it through ``test_checkpoints.py``'s kit.)"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

import aiosqlite
import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph

from grapharc.one_trip_saver import LIST_PAGE, OneTripSqliteSaver


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
    assert paged == ["_execute", "_read_page", "_close"]
    # a three-node run: LangGraph's own reads and writes, a trip each (95 per turn of a session
    # went to the thread with the base class)
    assert 0 < len(run) <= 11 and set(run) <= {"_read_one", "_write", "_execute", "_read_page", "_close"}, run


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
                {}, {"limit": 3}, {"limit": 0}, {"before": latest.config},
                {"filter": {"source": "loop"}}, {"filter": {"step": 4}, "limit": 1},
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
