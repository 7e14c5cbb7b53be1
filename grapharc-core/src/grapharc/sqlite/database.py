"""One SQLite file as a store uses it: a schema made once, a connection per thread, short transactions.

The SQLite session store and the SQLite run store share this: the file is put in WAL mode
and its schema created under ``BEGIN IMMEDIATE`` beside the ``meta`` table that keeps each
schema's version, and an older file's migrated under one write lock, so processes opening it at
once apply each migration once; ``SQLITE`` writes core's table descriptions (``grapharc.session.tables``) in
SQLite's DDL. Each thread keeps a connection of its own
(closing the last one would checkpoint the WAL); a change is one ``BEGIN IMMEDIATE``
transaction, so it is atomic across the processes sharing the file, and every SQLite failure
becomes the store's own error naming the file.

In a call run in place on the event loop (``grapharc.stores.in_place``), the first change joins
the call's scope with one ``BEGIN IMMEDIATE`` transaction on a connection that never waits (busy
timeout 0): a file busy with another connection's write refuses it at once (``WouldWait``, nothing
written), and each change after it is a savepoint of that transaction, which every later read of
the call reads through (so it sees what the call wrote); the scope commits it as the call ends.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, closing, contextmanager, nullcontext
from pathlib import Path

from grapharc.errors import GraphARCError
from grapharc.session.tables import DdlDialect, Type
from grapharc.sqlite.files import prepare_database_file
from grapharc.stores import in_place

SQLITE = DdlDialect({
    Type.TEXT: "TEXT", Type.INTEGER: "INTEGER", Type.SEQUENCE: "INTEGER", Type.REAL: "REAL",
    Type.JSON: "TEXT", Type.FLAG: "INTEGER", Type.COUNTER: "INTEGER PRIMARY KEY AUTOINCREMENT",
    Type.INSERTION_ORDER: None,
}, repeatable=True, booleans=("0", "1"))
"""Core's tables in SQLite: a counter never reuses a deleted row's key (AUTOINCREMENT), ``rowid``
keeps the insertion order, and every statement may run again on a file that has the tables."""

META = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
"""Each schema's version in the file, by key (a file may hold the session and the run tables)."""

_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)

MINIMUM_SQLITE = (3, 35, 0)
"""The oldest SQLite the stores run on: the first with ``RETURNING``."""

CLOSE_WAIT_SECONDS = 60.0
"""How long ``close`` waits for statements other threads are running (SQLite's busy timeout is 30 s)."""


class _Slot:
    """One thread's connection to the file (opened on first use, reopened after a ``close``) and
    the lock every use of it holds; entered, it is the connection, held until the block ends.

    Why ``close`` never frees a connection under a statement, nor a statement runs on a closed one,
    by mutual exclusion alone (no reasoning about the interpreter's lock): ``conn`` and ``depth`` are
    read and written only by a thread holding ``lock``. A statement runs on ``conn`` only inside a
    block that holds ``lock`` (``__enter__`` to ``__exit__``), and ``__enter__`` opens a new
    connection when it finds ``conn`` None; ``close`` closes ``conn`` and sets it None while holding
    ``lock``. ``lock`` is reentrant, for a block inside a block of the same thread; ``depth`` counts
    the blocks its owner is in, so a ``close`` from inside one (the one thread that can take the lock
    while a block holds it) leaves that connection open instead of closing it under the block."""

    __slots__ = ("conn", "database", "depth", "lock", "timeout")

    def __init__(self, database: SqliteDatabase, timeout: float) -> None:
        self.database = database
        self.timeout = timeout
        self.lock = threading.RLock()
        self.conn: sqlite3.Connection | None = None
        self.depth = 0

    def __enter__(self) -> sqlite3.Connection:
        self.lock.acquire()
        try:
            conn = self.conn
            if conn is None:
                conn = self.conn = self.database.connect(self.timeout)
                self.database.opened(self)
        except BaseException:
            self.lock.release()
            raise
        self.depth += 1
        return conn

    def __exit__(self, *exc_info: object) -> None:
        self.depth -= 1
        self.lock.release()

    def closed(self, deadline: float) -> bool:
        """Close the connection once no block holds it (waiting until ``deadline``, a monotonic time);
        False: still in use then (or by the calling thread itself), left open."""
        if not self.lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
            return False
        try:
            if self.depth:
                return False
            if self.conn is not None:
                self.conn.close()
                self.conn = None
            return True
        finally:
            self.lock.release()


class SqliteDatabase:
    """The SQLite file at ``path``, used as the ``what`` (``"session store"``) failing with ``error``.

    Each thread uses connections of its own (``_Slot``: one that waits for a busy file, one that
    does not); a statement holds its connection's lock, which ``close`` takes before closing it."""

    def __init__(self, path: Path, what: str, error: type[GraphARCError]) -> None:
        self.path = path
        self.what = what
        self.error = error
        self._local = threading.local()
        self._open: list[_Slot] = []
        self._lock = threading.Lock()

    def _require_returning(self) -> None:
        """Refuse an SQLite older than 3.35: the stores read back what they write with ``RETURNING``,
        which an older one answers with a syntax error in the middle of a run."""
        if sqlite3.sqlite_version_info < MINIMUM_SQLITE:
            raise self.error(
                f"cannot use {self.path} as a {self.what}: this Python's sqlite3 module links SQLite "
                f"{sqlite3.sqlite_version}, and GraphARC's stores need {'.'.join(map(str, MINIMUM_SQLITE))} "
                "or newer (for RETURNING)",
                hint="use a Python whose sqlite3 module links a newer SQLite (python.org's builds and "
                     "Debian 12 or Ubuntu 22.04's Python do), or keep sessions in PostgreSQL")

    def prepare(self, schema: str, version_key: str, version: str,
                migrations: Sequence[tuple[str, Sequence[str]]] = ()) -> None:
        """Create the file, ``meta`` and ``schema`` (``version``) if missing, bring a file of an older
        version up by ``migrations`` (each the version it makes and its statements, oldest first) in
        one transaction, and refuse a file whose ``meta`` keeps a version this code does not know
        under ``version_key``."""
        self._require_returning()
        prepare_database_file(self.path, self.what, self.error)
        known = [version, *(made for made, _ in migrations)]
        try:
            with closing(self.connect()) as conn:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(f"BEGIN IMMEDIATE;\n{META}\n{schema}\nCOMMIT;")
                conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (version_key, version))
                found = self._migrated(conn, version_key, known, migrations)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise self.error(f"cannot use {self.path} as a {self.what}: {exc}",
                             hint="point at a session directory GraphARC created, or a new one") from exc
        if found != known[-1]:
            raise self.error(f"{self.what} {self.path} has schema {found}; this GraphARC reads "
                             f"schema {known[-1]}", hint="upgrade GraphARC on this machine")

    @staticmethod
    def _migrated(conn: sqlite3.Connection, version_key: str, known: list[str],
                  migrations: Sequence[tuple[str, Sequence[str]]]) -> str:
        """Apply, under one write lock, the ``migrations`` past the file's version; the version now."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            found = conn.execute("SELECT value FROM meta WHERE key = ?", (version_key,)).fetchone()[0]
            if found in known:
                for made, statements in migrations[known.index(found):]:
                    for statement in statements:
                        conn.execute(statement)
                    found = made
                conn.execute("UPDATE meta SET value = ? WHERE key = ?", (found, version_key))
            conn.execute("COMMIT")
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        return str(found)

    def connect(self, timeout: float = 30.0) -> sqlite3.Connection:
        """A new autocommit connection with rows read by column name, waiting up to ``timeout``
        seconds for a busy file."""
        conn = sqlite3.connect(str(self.path), timeout=timeout, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def _slot(self, waits: bool = True) -> _Slot:
        """This thread's connection slot; ``waits=False``: its other one, which never waits for a busy
        file (the event loop's, for a call in place)."""
        name = "conn" if waits else "no_wait"
        slot: _Slot | None = getattr(self._local, name, None)
        if slot is None:
            slot = _Slot(self, 30.0 if waits else 0.0)
            setattr(self._local, name, slot)
        return slot

    def opened(self, slot: _Slot) -> None:
        """``slot`` has an open connection for ``close`` to close."""
        with self._lock:
            self._open.append(slot)

    def thread_connection(self, waits: bool = True) -> sqlite3.Connection:
        """This thread's connection, kept open until ``close``; ``waits=False``: its other one, which
        never waits for a busy file (the event loop's, for a call in place)."""
        with self._slot(waits) as conn:
            return conn

    def borrowed(self) -> AbstractContextManager[sqlite3.Connection]:
        """This thread's connection, held until the block ends, so ``close`` waits for it rather than
        close it under a statement another thread is running (which crashes CPython)."""
        return self._slot()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One atomic change: BEGIN IMMEDIATE, commit on success, roll back on any error; in a call
        run in place, a savepoint of the call's transaction (see the module)."""
        scope = in_place.current()
        if scope is not None:
            with self._savepoint(self._joined(scope)) as conn:
                yield conn
            return
        with self._slot() as conn:
            try:
                conn.execute("BEGIN IMMEDIATE")
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise self.error(f"{self.what} {self.path}: {exc}") from exc
                raise

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A consistent read: one deferred transaction, so a read of several tables sees one state
        (and takes no write lock); a SQLite failure is the store's error, as a write's is. In a call
        run in place that changed the file, a read in its transaction (see the module)."""
        joined = self._joined_already()
        if joined is not None:
            with self._failing():
                yield joined
            return
        with self._slot() as conn:
            try:
                conn.execute("BEGIN")
                try:
                    yield conn
                finally:
                    conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise self.error(f"{self.what} {self.path}: {exc}") from exc

    def autocommit(self) -> AbstractContextManager[sqlite3.Connection]:
        """This thread's connection outside any transaction: for a read of one statement, which
        SQLite runs in a snapshot of its own, so it needs no BEGIN and COMMIT around it (in a call
        run in place that changed the file, the call's transaction: see the module)."""
        joined = self._joined_already()
        return self._slot() if joined is None else nullcontext(joined)

    def _joined_already(self) -> sqlite3.Connection | None:
        """The connection of the transaction the call running in place here opened on this file, if any."""
        scope = in_place.current()
        joined = None if scope is None else scope.joined(self)
        return joined.conn if isinstance(joined, _Joined) else None

    def _joined(self, scope: in_place.InPlace) -> sqlite3.Connection:
        """The connection of ``scope``'s transaction on this file, begun now (without waiting) if the
        scope has none yet; ``WouldWait`` where the file is busy (see the module)."""
        if scope.waits:  # the call is undone anyway: change nothing more
            raise scope.would_wait()
        joined = self._joined_already()
        if joined is not None:
            return joined
        slot = self._slot(waits=False)
        conn = slot.__enter__()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            slot.__exit__()
            if getattr(exc, "sqlite_errorcode", 0) & 0xFF in _BUSY:  # the primary code
                raise scope.would_wait() from exc
            raise self.error(f"{self.what} {self.path}: {exc}") from exc
        except BaseException:
            slot.__exit__()
            raise
        scope.join(self, _Joined(self, slot, conn))
        return conn

    @contextmanager
    def _savepoint(self, conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        """One change inside the transaction on ``conn``: kept on success, undone (alone) on any
        error, as a change of its own would be."""
        with self._failing():
            conn.execute("SAVEPOINT change")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK TO change")
                conn.execute("RELEASE change")
                raise
            conn.execute("RELEASE change")

    @contextmanager
    def _failing(self) -> Iterator[None]:
        """A SQLite failure inside the block as the store's error naming the file."""
        try:
            yield
        except sqlite3.Error as exc:
            raise self.error(f"{self.what} {self.path}: {exc}") from exc

    def close(self) -> None:
        """Close every connection opened for a thread once no thread is using it (a connection still
        in use after ``CLOSE_WAIT_SECONDS`` is left to the next close, as is one the calling thread is
        using); a thread's next use opens a new one; closing twice is harmless."""
        deadline = time.monotonic() + CLOSE_WAIT_SECONDS
        with self._lock:
            slots, self._open = self._open, []
        kept = [slot for slot in slots if not slot.closed(deadline)]
        with self._lock:
            self._open.extend(kept)


class _Joined:
    """A ``SqliteDatabase``'s transaction in a call run in place (``in_place.Transaction``), holding
    the connection of the thread that runs the call, which ends it (``in_place.run``)."""

    def __init__(self, database: SqliteDatabase, slot: _Slot, conn: sqlite3.Connection) -> None:
        self.database = database
        self.slot = slot
        self.conn = conn

    def end(self, commit: bool) -> None:
        """Commit or roll back the transaction, and let the connection go."""
        try:
            with self.database._failing():
                try:
                    self.conn.execute("COMMIT" if commit else "ROLLBACK")
                finally:
                    if self.conn.in_transaction:  # a commit that failed
                        self.conn.execute("ROLLBACK")
        finally:
            self.slot.__exit__()
