"""LangGraph's SQLite checkpointer with an async API whose every call is one trip to its connection's thread.

``AsyncSqliteSaver`` awaits aiosqlite once per cursor call: opening a cursor, executing,
fetching, executing the pending writes' query, fetching again, closing, committing. A read of
one checkpoint is six trips to aiosqlite's thread and back, a write three or four, and the
turn of a three-node graph made 95 of them, which is why an async turn cost twice the CPU of a
sync one. ``OneTripSqliteSaver`` is core's sync saver (``grapharc.sqlite.saver``: LangGraph's
``SqliteSaver`` with the extended capabilities) on a thread that owns its connection: each async
method runs the matching sync method there as one function, so a read is one trip, a write one,
a page of ``alist`` one. The SQL and the (de)serialisation are LangGraph's own, and the thread is
``grapharc.stores.call_threads``' (a queue of calls, each result handed back to the caller's loop,
as aiosqlite's own thread works: half the cost of a trip through a ``ThreadPoolExecutor``), so nothing here
depends on another library's internals. An asyncio lock keeps the calls in order and a
listing's pages together.

Its sync methods work from any thread but its event loop's, where they raise (as
``AsyncSqliteSaver``'s do): a listing holds the connection between its pages, and only the
loop moves it on. Fenced (``fenced_by``, as ``grapharc.session.fencing.fence`` asks), a write
checks its threads' leases on the connection's thread in the write's own trip, just before it:
the same check as ``FencedSaver``'s, without a trip of its own to another thread (ten per
three-node turn).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Self, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from grapharc.sqlite.saver import SqliteCheckpointSaver
from grapharc.stores.call_threads import CallThreads

T = TypeVar("T")

LIST_PAGE = 16
"""Checkpoints ``alist`` reads per trip when it has no limit (with one it reads them all at once)."""


class OneTripSqliteSaver(SqliteCheckpointSaver):
    """``SqliteCheckpointSaver`` whose async methods each make one trip to the connection's thread
    (``alist``: one per page); see the module. Open one with ``open``."""

    def __init__(self, conn: sqlite3.Connection, thread: CallThreads, *,
                 serde: SerializerProtocol | None = None) -> None:
        super().__init__(conn, serde=serde)
        self.thread = thread
        """The one thread ``conn`` is used on by the async methods."""
        self.loop_thread = threading.get_ident()
        """The thread of the event loop this saver is bound to, where its sync methods are refused."""
        self.turns = asyncio.Lock()
        """Held by each async call for its trips, so they run in order and a listing's pages together."""

    @classmethod
    @asynccontextmanager
    async def open(cls, path: str | Path) -> AsyncIterator[Self]:
        """A saver over the SQLite file at ``path``, on the running loop and a thread of its own;
        its connection is closed, and its thread ended, on exit."""
        thread = CallThreads("grapharc-checkpoints")
        try:
            connection = await thread.run(
                functools.partial(sqlite3.connect, str(path), check_same_thread=False))
            try:
                yield cls(connection, thread)
            finally:
                await thread.run(connection.close)
        finally:
            thread.stop()

    async def asetup(self) -> None:
        """Create LangGraph's tables if missing (``setup``), on the connection's thread."""
        await self._trip(self.setup)

    @contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        """``SqliteSaver``'s cursor (every sync method's way to the connection), refused on the
        event loop's thread (see the module)."""
        if threading.get_ident() == self.loop_thread:
            raise asyncio.InvalidStateError(
                "OneTripSqliteSaver's sync methods cannot run on its event loop's thread; use the async "
                "ones (aget_tuple, alist, aput, ...) there, or call the sync ones from another thread")
        with super().cursor(transaction) as cur:
            yield cur

    async def _trip(self, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``work(*args, **kwargs)`` on the connection's thread, after the calls before it."""
        async with self.turns:
            return await self._on_thread(work, *args, **kwargs)

    async def _on_thread(self, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``work(*args, **kwargs)`` on the connection's thread; the caller holds ``turns``."""
        return await self.thread.run(functools.partial(work, *args, **kwargs))

    async def aone_trip(self, work: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """``work(*args, **kwargs)``, a function of this saver's sync methods (or of a graph's
        reads and writes through it), run on the connection's thread in one trip, in order behind
        the calls before it: a caller that reads and then writes (the run ledger's marker) makes
        one trip instead of one per call (``grapharc.runtime.wrapped_saver.in_one_trip``)."""
        return await self._trip(work, *args, **kwargs)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (its latest without a ``checkpoint_id``), in one trip."""
        return await self._trip(self.get_tuple, config)

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None,
                    limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        """The matching checkpoints, newest first: all of them in one trip when a positive ``limit``
        is given or they fit in a page, else ``LIST_PAGE`` per trip."""
        listing = self.list(config, filter=filter, before=before, limit=limit)
        size = None if limit is not None and limit > 0 else LIST_PAGE  # SQLite: LIMIT -1 is none
        async with self.turns:
            ended = False
            try:
                while not ended:
                    found = await self._on_thread(_page, listing, size)
                    ended = size is None or len(found) < size  # the listing ran out, and closed itself
                    for each in found:
                        yield each
            finally:
                if not ended:  # the reader stopped early: the listing lets go of the connection
                    await self._on_thread(_close, listing)

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        """Save ``checkpoint`` (serialised, written and committed in one trip)."""
        return await self._trip(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        """Save a task's writes (serialised, written and committed in one trip)."""
        await self._trip(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await self._trip(self.delete_thread, thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self._trip(self.prune, thread_ids, strategy=strategy)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._trip(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._trip(self.copy_thread, source_thread_id, target_thread_id)

    async def aget_delta_channel_history(self, *, config: RunnableConfig,
                                         channels: Sequence[str]) -> Mapping[str, DeltaChannelHistory]:
        return await self._trip(self.get_delta_channel_history, config=config, channels=channels)


def _page(listing: Iterator[CheckpointTuple], size: int | None) -> list[CheckpointTuple]:
    """The listing's next ``size`` checkpoints (None: all the rest)."""
    return list(listing if size is None else itertools.islice(listing, size))


def _close(listing: Iterator[CheckpointTuple]) -> None:
    """Close a listing left part-read (``SqliteSaver.list`` is a generator)."""
    if isinstance(listing, Generator):
        listing.close()
