"""Durable graph state: LangGraph's SQLite savers behind the ``sqlite:`` store scheme.

``open_store("sqlite:LOCATION", kind="checkpoints")`` gives a ``SqliteCheckpoints``, the
``CheckpointerProvider`` (``grapharc.session.contracts``) that core ships: a directory's
``checkpoints.db``, or the file named (``grapharc.session.sqlite_files``). Its sync
``SqliteSaver`` is shared by the process; each event loop gets an async saver of its own: a
``SqliteSaver`` on a connection and a thread of its own behind ``ThreadedSaver``, one trip to
that thread per call (LangGraph's ``AsyncSqliteSaver`` makes one per statement, through
aiosqlite).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from grapharc.errors import GraphARCError
from grapharc.session.sqlite_files import CHECKPOINTS_FILE, database_path, footprint, prepare_database_file

if TYPE_CHECKING:
    from langgraph.checkpoint.sqlite import SqliteSaver

    from grapharc.runtime.threaded_saver import ThreadedSaver


class CheckpointStoreError(GraphARCError):
    """A checkpoint store location that cannot be opened."""


class SqliteCheckpoints:
    """LangGraph's SQLite savers over the one file at ``path`` (created with its folder if missing)."""

    def __init__(self, path: Path) -> None:
        prepare_database_file(path, "checkpoint store", CheckpointStoreError)
        self.path = path
        self._saver: SqliteSaver | None = None
        self._lock = threading.Lock()

    def saver(self) -> SqliteSaver:
        """The sync ``SqliteSaver``, opened on first call and shared by every thread."""
        with self._lock:
            if self._saver is None:
                self._saver = self._open_saver()
            return self._saver

    @asynccontextmanager
    async def async_saver(self) -> AsyncIterator[ThreadedSaver]:
        """An async saver for the running loop, its connection and thread closed on exit."""
        from grapharc.runtime.threaded_saver import ThreadedSaver

        thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grapharc-checkpoints")
        loop = asyncio.get_running_loop()
        try:
            saver = await loop.run_in_executor(thread, self._open_saver)
            try:
                yield ThreadedSaver(saver, thread)
            finally:
                await loop.run_in_executor(thread, saver.conn.close)
        finally:
            thread.shutdown(wait=False)

    def _open_saver(self) -> SqliteSaver:
        """A ``SqliteSaver`` on a connection of its own, its tables created if missing."""
        from langgraph.checkpoint.sqlite import SqliteSaver

        connection = sqlite3.connect(str(self.path), check_same_thread=False)
        try:
            saver = SqliteSaver(connection)
            saver.setup()
        except sqlite3.DatabaseError as exc:
            connection.close()
            raise self._unusable(exc) from exc
        return saver

    def compact(self) -> None:
        """``VACUUM`` the file and truncate its WAL, so deleted checkpoints free disk space."""
        saver = self.saver()
        with saver.lock:
            saver.conn.execute("VACUUM")
            saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def footprint(self) -> dict[str, int]:
        """Bytes of the file, its WAL and shared-memory files included."""
        return footprint(self.path)

    def close(self) -> None:
        """Close the sync saver's connection (it reopens on the next ``saver()``)."""
        with self._lock:
            saver, self._saver = self._saver, None
        if saver is not None:
            saver.conn.close()

    def _unusable(self, exc: Exception) -> CheckpointStoreError:
        return CheckpointStoreError(f"cannot use {self.path} as a checkpoint store: {exc}",
                                    hint="point at a file GraphARC's checkpoints created, or a new one")


def open_sqlite_checkpointer(location: str, kind: str = "checkpoints") -> SqliteCheckpoints:
    """The store-hook factory behind ``sqlite:`` for ``kind="checkpoints"``."""
    return SqliteCheckpoints(database_path(location, CHECKPOINTS_FILE, CheckpointStoreError))
