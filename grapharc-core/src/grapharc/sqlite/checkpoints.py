"""Durable graph state: LangGraph's SQLite savers behind the ``sqlite:`` store scheme.

``open_store("sqlite:LOCATION", kind="checkpoints")`` gives a ``SqliteCheckpoints``, the
``CheckpointerProvider`` (``grapharc.session.contracts``) that core ships: a directory's
``checkpoints.db``, or the file named (``grapharc.sqlite.files``). Its sync saver (LangGraph's
``SqliteSaver`` with the extended capabilities, ``grapharc.sqlite.saver``) is shared by the
process; each event loop gets an async one of its own (``grapharc.sqlite.one_trip_saver``), since an
async saver is bound to the loop that opened it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import TYPE_CHECKING

from grapharc.errors import GraphARCError
from grapharc.sqlite.files import CHECKPOINTS_FILE, database_path, footprint, prepare_database_file

if TYPE_CHECKING:
    from grapharc.sqlite.one_trip_saver import OneTripSqliteSaver
    from grapharc.sqlite.saver import SqliteCheckpointSaver


class CheckpointStoreError(GraphARCError):
    """A checkpoint store location that cannot be opened."""


_TABLE_EXISTS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
_THREAD_EXISTS = "SELECT 1 FROM checkpoints WHERE thread_id = ? LIMIT 1"


class SqliteCheckpoints:
    """LangGraph's SQLite savers over the one file at ``path`` (created with its folder if missing)."""

    READS_ON_LOOP = True
    """Its reads may run on an event loop's thread: a local file in WAL mode, whose readers never wait
    for a writer; its sync saver's statements take turns on one connection, each a short wait
    (``grapharc.stores.offload.reads_on_loop``)."""
    WRITES_ON_LOOP = True
    """A call run in place on an event loop may read through its sync saver, which refuses at once what
    would write or wait there (``grapharc.sqlite.saver``, ``grapharc.stores.in_place``)."""

    def __init__(self, path: Path) -> None:
        prepare_database_file(path, "checkpoint store", CheckpointStoreError)
        self.path = path
        self._saver: SqliteCheckpointSaver | None = None
        self._lock = threading.Lock()

    def saver(self) -> SqliteCheckpointSaver:
        """The sync saver, opened on first call and shared by every thread."""
        from grapharc.sqlite.saver import SqliteCheckpointSaver

        with self._lock:
            if self._saver is None:
                connection = sqlite3.connect(str(self.path), check_same_thread=False)
                try:
                    saver = SqliteCheckpointSaver(connection)
                    saver.setup()
                except sqlite3.DatabaseError as exc:
                    connection.close()
                    raise self._unusable(exc) from exc
                self._saver = saver
            return self._saver

    def holds_thread(self, thread_id: str) -> bool:
        """Whether the file holds a checkpoint of ``thread_id``, read without writing anything.

        ``saver()`` creates LangGraph's tables; asking first keeps a refused resume from adding
        them to a file that never held checkpoints (another store's database, say).
        """
        if not self.path.is_file():
            return False
        try:
            with closing(sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)) as db:
                if db.execute(_TABLE_EXISTS, ("checkpoints",)).fetchone() is None:
                    return False
                return db.execute(_THREAD_EXISTS, (thread_id,)).fetchone() is not None
        except sqlite3.DatabaseError as exc:
            raise self._unusable(exc) from exc

    @asynccontextmanager
    async def async_saver(self) -> AsyncIterator[OneTripSqliteSaver]:
        """A ``OneTripSqliteSaver`` on the running loop (each call one trip to its connection's
        thread), its connection and thread closed on exit."""
        from grapharc.sqlite.one_trip_saver import OneTripSqliteSaver

        async with OneTripSqliteSaver.open(self.path) as saver:
            try:
                await saver.asetup()
            except sqlite3.DatabaseError as exc:
                raise self._unusable(exc) from exc
            yield saver

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
