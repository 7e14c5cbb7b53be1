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

In place where it cannot wait: a read of one checkpoint, a listing with a limit, a checkpoint's or
a task's writes run on the event loop's thread itself, with no trip (about 165 µs of CPU each under
a server's load, a dozen per three-node run), whenever that cannot make the loop wait. Nothing
there waits for SQLite: the connection's busy timeout is 0 for a call in place and ``WAIT_MS`` for
a call off the loop (each sets it, by a PRAGMA, only when the call before ran on the other side:
setting it and back around every call off the loop was 14 statements a run), so a file busy with
another connection's write (another process of ``--workers``, the sync saver's prune) answers
``SQLITE_BUSY`` at once; nor for the connection: the call runs only if it takes ``lock`` without
waiting (a sync caller on another thread may hold it). Either way nothing was written (the write
lock is taken by the first write), the call is rolled back and sent to the connection's thread as
before, to wait there. A fenced write runs in place only when its lease check may run on the loop
(``Leases.reads_on_loop``: the session store reads a WAL file, whose readers never wait for a
writer). A call of its own transaction (prune, delete, copy) or of a caller's (``aone_trip``), or
a listing read page by page, keeps its trip.
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
WAIT_MS = 5000
"""How long a call off the event loop waits for a busy file (``sqlite3.connect``'s own default)."""
_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class OneTripSqliteSaver(SqliteCheckpointSaver):
    """``SqliteCheckpointSaver`` whose async methods each make one trip to the connection's thread
    (``alist``: one per page); see the module. Open one with ``open``."""

    WRITES_ON_LOOP = False
    """Its sync methods refuse the event loop's thread (its async ones run in place themselves)."""

    def __init__(self, conn: sqlite3.Connection, thread: CallThreads, *,
                 serde: SerializerProtocol | None = None) -> None:
        super().__init__(conn, serde=serde)
        self.thread = thread
        """The one thread ``conn`` is used on by the async methods."""
        self.loop_thread = threading.get_ident()
        """The thread of the event loop this saver is bound to, where its sync methods are refused."""
        self.turns = asyncio.Lock()
        """Held by each async call for its trips, so they run in order and a listing's pages together."""
        self.in_place = False
        """True while the event loop runs a call in place (``_in_place``, holding ``lock``)."""
        self.busy_ms = 0
        """The connection's busy timeout as last set (``open`` connects with none)."""

    @classmethod
    @asynccontextmanager
    async def open(cls, path: str | Path) -> AsyncIterator[Self]:
        """A saver over the SQLite file at ``path``, on the running loop and a thread of its own;
        its connection is closed, and its thread ended, on exit."""
        thread = CallThreads("grapharc-checkpoints")
        try:
            connection = await thread.run(  # no busy wait but a call's off the loop (see the module)
                functools.partial(sqlite3.connect, str(path), timeout=0, check_same_thread=False))
            try:
                yield cls(connection, thread)
            finally:
                await thread.run(connection.close)
        finally:
            thread.stop()

    async def asetup(self) -> None:
        """Create LangGraph's tables if missing (``setup``), on the connection's thread."""
        await self._trip(self.setup)

    def setup(self) -> None:
        """``SqliteCheckpointSaver.setup``, waiting for a busy file as any call off the loop does."""
        with self.lock:
            self._busy_timeout(WAIT_MS)
            super().setup()

    @contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        """``SqliteSaver``'s cursor (every sync method's way to the connection), under ``lock`` and
        waiting for a busy file; refused on the event loop's thread but in a call ``_in_place``
        runs (which holds ``lock``, and where SQLite does not wait; see the module)."""
        if threading.get_ident() != self.loop_thread:
            with self.lock:
                self._busy_timeout(WAIT_MS)
                with self._cursor(transaction) as cur:
                    yield cur
            return
        if not self.in_place:
            raise asyncio.InvalidStateError(
                "OneTripSqliteSaver's sync methods cannot run on its event loop's thread; use the async "
                "ones (aget_tuple, alist, aput, ...) there, or call the sync ones from another thread")
        with self._cursor(transaction) as cur:
            yield cur

    @contextmanager
    def _cursor(self, transaction: bool) -> Iterator[sqlite3.Cursor]:
        """A cursor on the connection, committed at its end if ``transaction`` (the caller holds
        ``lock``): ``SqliteSaver.cursor``'s body."""
        super().setup()
        cur = self.conn.cursor()
        try:
            yield cur
        finally:
            if transaction:
                self.conn.commit()
            cur.close()

    def _busy_timeout(self, ms: int) -> None:
        """The connection waits up to ``ms`` for a busy file from now on (the caller holds ``lock``):
        a PRAGMA only when the call before set another."""
        if self.busy_ms != ms:
            self.conn.execute(f"PRAGMA busy_timeout = {ms}")
            self.busy_ms = ms

    def _in_place(self, work: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[bool, T | None]:
        """``work(*args, **kwargs)`` on the event loop's thread where it cannot wait there: ``(True,
        result)``; ``(False, None)``, nothing of it written, where it could (see the module)."""
        fence_waits = self.leases is not None and not self.leases.reads_on_loop
        if fence_waits or not self.is_setup or not self.lock.acquire(blocking=False):
            return False, None
        self.in_place = True
        try:
            self._busy_timeout(0)
            return True, work(*args, **kwargs)
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorcode", 0) & 0xFF not in _BUSY:  # the primary code
                raise
            if self.conn.in_transaction:
                self.conn.rollback()
            return False, None
        finally:
            self.in_place = False
            self.lock.release()

    async def _call(self, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``work(*args, **kwargs)`` after the calls before it: in place where it cannot wait on the
        loop, else in a trip to the connection's thread (see the module)."""
        async with self.turns:
            ran, result = self._in_place(work, *args, **kwargs)
            if ran:
                return result  # type: ignore[return-value]  # work's own result, None included
            return await self._on_thread(work, *args, **kwargs)

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
        """The checkpoint ``config`` names (its latest without a ``checkpoint_id``), in place or in
        one trip."""
        return await self._call(self.get_tuple, config)

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None,
                    limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        """The matching checkpoints, newest first: all of them at once (in place, or in one trip)
        when a positive ``limit`` is given, else ``LIST_PAGE`` per trip."""
        if limit is not None and limit > 0:
            for each in await self._call(self._listed, config, filter, before, limit):
                yield each
            return
        listing = self.list(config, filter=filter, before=before, limit=limit)
        async with self.turns:
            ended = False
            try:
                while not ended:
                    found = await self._on_thread(_page, listing, LIST_PAGE)
                    ended = len(found) < LIST_PAGE  # the listing ran out, and closed itself
                    for each in found:
                        yield each
            finally:
                if not ended:  # the reader stopped early: the listing lets go of the connection
                    await self._on_thread(_close, listing)

    def _listed(self, config: RunnableConfig | None, filter: dict[str, Any] | None,
                before: RunnableConfig | None, limit: int) -> list[CheckpointTuple]:
        """``list``'s checkpoints, read to the end."""
        return list(self.list(config, filter=filter, before=before, limit=limit))

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        """Save ``checkpoint`` (serialised, written and committed in place or in one trip)."""
        return await self._call(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        """Save a task's writes (serialised, written and committed in place or in one trip)."""
        await self._call(self.put_writes, config, writes, task_id, task_path)

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


def _page(listing: Iterator[CheckpointTuple], size: int) -> list[CheckpointTuple]:
    """The listing's next ``size`` checkpoints."""
    return list(itertools.islice(listing, size))


def _close(listing: Iterator[CheckpointTuple]) -> None:
    """Close a listing left part-read (``SqliteSaver.list`` is a generator)."""
    if isinstance(listing, Generator):
        listing.close()
