"""LangGraph's async SQLite checkpointer with each read and write one trip to its connection's thread.

``AsyncSqliteSaver`` awaits aiosqlite once per cursor call: opening a cursor, executing,
fetching, executing the pending writes' query, fetching again, closing, committing. A read of
one checkpoint is six trips to aiosqlite's thread and back, a write three or four, and the
turn of a three-node graph made 95 of them, which is why an async turn cost twice the CPU of a
sync one. ``OneTripSqliteSaver`` runs the SQL of each call as one function on that thread (the
same connection, the same statements, under the same lock, so calls keep their order) and
does the (de)serialisation on the event loop, as the base class does: a read is one trip, a
write one, a page of ``alist`` one. Everything else (setup, deleting a thread, delta history)
is the base class's.

Fenced (``fenced_by``, as ``grapharc.session.fencing.fence`` asks), a write checks its thread's
lease on the connection's thread in the write's own trip, just before it: the same check as
``FencedSaver``'s, without a trip of its own to another thread (ten per three-node turn).
"""

from __future__ import annotations

import copy
import functools
import json
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.checkpoint.sqlite.utils import load_pending_writes, pending_writes_sql, search_where

if TYPE_CHECKING:
    from grapharc.session.fencing import Leases

T = TypeVar("T")

Row = tuple[Any, ...]  # a row of ``_COLUMNS`` (a checkpoint) or of ``pending_writes_sql`` (a write)
Found = tuple[Row, list[Row]]  # a checkpoint's row and its pending writes' rows

LIST_PAGE = 16
"""Checkpoints ``alist`` reads per trip when it has no limit (with one it reads them all at once)."""

_COLUMNS = "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"
_BY_ID = f"SELECT {_COLUMNS} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
_LATEST = (f"SELECT {_COLUMNS} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
           "ORDER BY checkpoint_id DESC LIMIT 1")
_PUT = (f"INSERT OR REPLACE INTO checkpoints ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)")
_WRITE_COLUMNS = "thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value"
_PUT_WRITES = {True: f"INSERT OR REPLACE INTO writes ({_WRITE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
               False: f"INSERT OR IGNORE INTO writes ({_WRITE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"}


class OneTripSqliteSaver(AsyncSqliteSaver):
    """``AsyncSqliteSaver`` whose ``aget_tuple``, ``alist``, ``aput`` and ``aput_writes`` each make
    one trip to aiosqlite's thread per call (``alist``: per page); see the module."""

    leases: Leases | None = None
    """The leases a copy made by ``fenced_by`` checks before each write; None: unfenced."""

    def fenced_by(self, leases: Leases) -> Self:
        """This saver (sharing its connection and lock) refusing, in each write's own trip, a write
        to a thread ``leases`` holds whose lease is no longer current (``LeaseLostError``)."""
        fenced = copy.copy(self)
        fenced.leases = leases
        return fenced

    def _fence(self, config: RunnableConfig) -> Callable[[], None] | None:
        """The lease check a write of ``config`` makes first on the connection's thread, if fenced."""
        return None if self.leases is None else functools.partial(self.leases.check, config)

    async def _trip(self, work: Callable[..., T], *args: Any) -> T:
        """Run ``work(connection, *args)`` on the connection's thread, after setup, under the lock.
        (aiosqlite's ``_execute`` is how its own cursor calls get there.)"""
        await self.setup()
        async with self.lock:
            return await self._on_thread(work, *args)

    async def _on_thread(self, work: Callable[..., T], *args: Any) -> T:
        """``work(connection, *args)`` on the connection's thread; the caller holds the lock."""
        return cast(T, await self.conn._execute(work, self.conn._conn, *args))  # type: ignore[no-untyped-call]

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (its latest without a ``checkpoint_id``), in one trip."""
        checkpoint_ns = config["configurable"].get("checkpoint_ns", "")
        checkpoint_id = get_checkpoint_id(config)
        found = await self._trip(_read_one, str(config["configurable"]["thread_id"]), checkpoint_ns,
                                 checkpoint_id, self._has_task_path)
        if found is None:
            return None
        return self._tuple(found, config if checkpoint_id else None)

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None,
                    limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        """The matching checkpoints, newest first: all of them in one trip when a positive ``limit``
        is given or they fit in a page, else ``LIST_PAGE`` per trip."""
        where, params = search_where(config, filter, before)
        query = f"SELECT {_COLUMNS} FROM checkpoints {where} ORDER BY checkpoint_id DESC"
        if limit is not None:
            query, params = query + " LIMIT ?", (*params, limit)
        page = limit if limit is not None and limit > 0 else LIST_PAGE  # SQLite: LIMIT -1 is none
        limited = page == limit
        await self.setup()
        async with self.lock:
            cursor, found = await self._on_thread(_first_page, query, params, page, self._has_task_path,
                                                  limited)
            try:
                while True:
                    for each in found:
                        yield self._tuple(each, None)
                    if cursor is None:
                        break
                    cursor, found = await self._on_thread(_next_page, cursor, page, self._has_task_path)
            finally:
                if cursor is not None:
                    await self._on_thread(_close, cursor)

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        """Save ``checkpoint`` (serialised here, written and committed in one trip)."""
        thread_id = str(config["configurable"]["thread_id"])
        checkpoint_ns = config["configurable"]["checkpoint_ns"]
        type_, serialized = self.serde.dumps_typed(checkpoint)
        serialized_metadata = json.dumps(get_checkpoint_metadata(config, metadata),
                                         ensure_ascii=False).encode("utf-8", "ignore")
        row = (thread_id, checkpoint_ns, checkpoint["id"], config["configurable"].get("checkpoint_id"),
               type_, serialized, serialized_metadata)
        await self._trip(_write, _PUT, [row], self._fence(config))
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns,
                                 "checkpoint_id": checkpoint["id"]}}

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        """Save a task's writes (serialised here, written and committed in one trip)."""
        configurable = config["configurable"]
        key = (str(configurable["thread_id"]), str(configurable["checkpoint_ns"]),
               str(configurable["checkpoint_id"]), task_id, task_path)
        rows = [(*key, WRITES_IDX_MAP.get(channel, idx), channel, *self.serde.dumps_typed(value))
                for idx, (channel, value) in enumerate(writes)]
        await self._trip(_write, _PUT_WRITES[all(w[0] in WRITES_IDX_MAP for w in writes)], rows,
                         self._fence(config))

    def _tuple(self, found: Found, config: RunnableConfig | None) -> CheckpointTuple:
        """The checkpoint tuple of a row and its writes, deserialised; ``config`` as the tuple's own
        when the caller named the checkpoint (as the base class keeps it)."""
        (thread_id, checkpoint_ns, checkpoint_id, parent_id, type_, checkpoint, metadata), writes = found
        own = config or {"configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns,
                                          "checkpoint_id": checkpoint_id}}
        parent: RunnableConfig | None = None
        if parent_id:
            parent = {"configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns,
                                       "checkpoint_id": parent_id}}
        return CheckpointTuple(own, self.serde.loads_typed((type_, checkpoint)),
                               cast(CheckpointMetadata, json.loads(metadata) if metadata is not None else {}),
                               parent, load_pending_writes(writes, self.serde))


# -- the functions that run on the connection's thread -----------------------------------------------


def _read_one(connection: sqlite3.Connection, thread_id: str, checkpoint_ns: str,
              checkpoint_id: str | None, has_task_path: bool) -> Found | None:
    """The named (or latest) checkpoint's row and its writes' rows, or None."""
    if checkpoint_id:
        row = connection.execute(_BY_ID, (thread_id, checkpoint_ns, checkpoint_id)).fetchone()
    else:
        row = connection.execute(_LATEST, (thread_id, checkpoint_ns)).fetchone()
    return None if row is None else (row, _writes_of(connection, row, has_task_path))


def _first_page(connection: sqlite3.Connection, query: str, params: Sequence[Any], size: int,
                has_task_path: bool, whole: bool) -> tuple[sqlite3.Cursor | None, list[Found]]:
    """Run the query and read its first page (``_next_page``)."""
    return _next_page(connection, connection.execute(query, params), size, has_task_path, whole)


def _next_page(connection: sqlite3.Connection, cursor: sqlite3.Cursor, size: int, has_task_path: bool,
               whole: bool = False) -> tuple[sqlite3.Cursor | None, list[Found]]:
    """The cursor's next ``size`` checkpoint rows, each with its writes' rows, and the cursor; it
    is closed here, and None, once they are its last (or ``whole``: the page is the query's limit)."""
    found = [(row, _writes_of(connection, row, has_task_path)) for row in cursor.fetchmany(size)]
    if whole or len(found) < size:
        cursor.close()
        return None, found
    return cursor, found


def _close(connection: sqlite3.Connection, cursor: sqlite3.Cursor) -> None:
    cursor.close()


def _writes_of(connection: sqlite3.Connection, row: Row, has_task_path: bool) -> list[Row]:
    return connection.execute(pending_writes_sql(has_task_path), row[:3]).fetchall()


def _write(connection: sqlite3.Connection, statement: str, rows: list[Row],
           fence: Callable[[], None] | None) -> None:
    """Write ``rows`` with ``statement`` and commit, once ``fence`` (if any) did not refuse."""
    if fence is not None:
        fence()
    connection.executemany(statement, rows)
    connection.commit()
