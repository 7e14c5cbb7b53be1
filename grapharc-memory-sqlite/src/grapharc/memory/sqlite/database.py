"""What the claim store and the artifact store share of one SQLite file: holding its connection,
WAL with full sync, write transactions that take the file's lock up front, and per-component
schema versions."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from grapharc.errors import GraphARCError

ROWS_PER_STATEMENT = 500  # a batch of 1,000 in two runs of one cached statement
MAPPED_BYTES = 256 * 2**20  # about 500k claims' worth of file; the rest is read as before
IN_JSON_LIST = "IN (SELECT value FROM json_each(?))"  # with one ``json_list`` parameter
WAL_SWITCH_SECONDS = 30.0  # as long as a connection waits for a lock (``timeout`` in ``_connect``)


class SQLiteFileStore:
    """A store's hold on its file: one connection, shared by threads under ``_lock`` and refused
    (with ``closed_error`` naming the ``noun`` and path) once ``close()`` has run."""

    noun: str
    closed_error: Callable[[str], GraphARCError]

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None

    def _connect(self) -> None:
        """Open the file (created if missing) in autocommit mode; transactions are explicit."""
        self._connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                           timeout=30.0)

    def _open_connection(self) -> sqlite3.Connection:
        if self._connection is None:
            raise self.closed_error(f"{self.noun} {str(self.path)!r}")
        return self._connection

    def _transaction(self) -> AbstractContextManager[sqlite3.Cursor]:
        return immediate(self._open_connection())

    def _create_or_check(self, cursor: sqlite3.Cursor, component: str, version: int, schema: Iterable[str],
                         error: type[GraphARCError], migratable: Container[int] = ()) -> bool:
        """Create ``component``'s tables (``schema``) at ``version`` in a file that has none yet;
        True when the file has an older version in ``migratable``, for the caller to migrate.
        Any other version is refused with ``error``: this code would misread it."""
        found = stored_version(cursor, component)
        if found is None:
            for statement in schema:
                cursor.execute(statement)
            record_version(cursor, component, version)
            return False
        if found in migratable:
            return True
        if found != version:
            raise error(f"{self.noun} {str(self.path)!r} has {component} schema version {found}, "
                        f"but this grapharc-memory-sqlite reads version {version}",
                        hint="open it with the GraphARC version that wrote it")
        return False

    def close(self) -> None:
        """Close the connection; idempotent."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None


def use_wal(connection: sqlite3.Connection, what: str, error: type[GraphARCError]) -> None:
    """Switch the file to WAL with ``synchronous=FULL``; ``error`` names ``what`` if it cannot.

    While another process is creating the same file, the switch can fail "database is locked" at
    once: it reads the file, then needs its exclusive lock, and SQLite does not wait where waiting
    could deadlock. So the switch is tried again until ``WAL_SWITCH_SECONDS`` (seen in a full-suite
    run: two processes opening a new item store)."""
    deadline = time.monotonic() + WAL_SWITCH_SECONDS
    while True:
        try:
            mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)
    if mode != "wal":
        raise error(f"{what} cannot use WAL mode (it stays {mode!r})",
                    hint="keep the file on a local filesystem that supports shared memory")
    connection.execute("PRAGMA synchronous=FULL")


def read_through_memory_map(connection: sqlite3.Connection) -> None:
    """Let SQLite read the file's first ``MAPPED_BYTES`` through a memory map instead of a
    system call per page copied into its 2 MB cache (the benchmark's zipf searches at 100k
    claims made about 530 such calls each, on average). Writes go through the WAL as before."""
    connection.execute(f"PRAGMA mmap_size={MAPPED_BYTES}")


def immediate(connection: sqlite3.Connection) -> AbstractContextManager[sqlite3.Cursor]:
    """Run the block in one write transaction that takes the file's write lock up front."""
    return _transaction(connection, "BEGIN IMMEDIATE")


def snapshot(connection: sqlite3.Connection) -> AbstractContextManager[sqlite3.Cursor]:
    """Run the block's reads in one transaction, so they all see the same committed state."""
    return _transaction(connection, "BEGIN")


@contextmanager
def _transaction(connection: sqlite3.Connection, begin: str) -> Iterator[sqlite3.Cursor]:
    cursor = connection.cursor()
    cursor.execute(begin)
    try:
        yield cursor
    except BaseException:
        if cursor.connection.in_transaction:
            cursor.execute("ROLLBACK")
        raise
    cursor.execute("COMMIT")


def stored_version(cursor: sqlite3.Cursor, component: str) -> int | None:
    """The schema version ``component`` was written with, None in a file it has not used yet."""
    cursor.execute("CREATE TABLE IF NOT EXISTS schema_versions "
                   "(component TEXT PRIMARY KEY, version INTEGER NOT NULL)")
    row = cursor.execute("SELECT version FROM schema_versions WHERE component = ?",
                         (component,)).fetchone()
    return None if row is None else int(row[0])


def record_version(cursor: sqlite3.Cursor, component: str, version: int) -> None:
    """Record that ``component``'s tables now have schema ``version``."""
    cursor.execute("INSERT INTO schema_versions (component, version) VALUES (?, ?) "
                   "ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                   (component, version))


def insert_rows(cursor: sqlite3.Cursor, table: str, columns: Sequence[str],
                rows: Sequence[Sequence[object]]) -> None:
    """Insert ``rows`` with multi-row ``VALUES`` statements of up to ``ROWS_PER_STATEMENT``
    rows (fewer if the connection's parameter limit says so): a statement runs once for all
    its rows, where ``executemany`` runs it once per row (filling 100k claims, about 1 us less
    per claim)."""
    per_statement = rows_per_statement(cursor.connection, len(columns))
    row_marks = "(" + ", ".join("?" * len(columns)) + ")"
    for start in range(0, len(rows), per_statement):
        chunk = rows[start:start + per_statement]
        cursor.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES "  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                       f"{', '.join([row_marks] * len(chunk))}",
                       [value for row in chunk for value in row])


def rows_per_statement(connection: sqlite3.Connection, columns: int) -> int:
    """How many rows of ``columns`` values ``insert_rows`` puts in one statement."""
    return max(1, min(ROWS_PER_STATEMENT,
                      connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // columns))


def json_list(values: Iterable[int]) -> str:
    """Integers as one JSON array, the single parameter ``IN_JSON_LIST`` reads: the
    statement's text stays the same whatever the count, so SQLite compiles it once per
    connection (a ``?`` per value compiled it afresh for each new count, at about 50 us a
    time), and no count reaches the connection's parameter limit."""
    return "[" + ",".join(map(str, values)) + "]"
