"""Run traces in PostgreSQL, shared by every worker: ``open_store("postgresql://HOST/DB", kind="traces")``.

Each event is one row of ``grapharc_trace_events`` holding the exact line the file writer would
append (without its newline), so the rows read back in ``seq`` order are the line stream a file
gives ``grapharc.observe``'s reader: one parser, one set of checks and messages for both. A batch
of events (``TraceWriter.append_many``) is one INSERT; a reader asking for one run or thread gets
only its rows, filtered by the database.

The store and its sinks borrow the process's database (``grapharc.postgres.database``): reads and
writes run on connections of its pool. A sink's INSERT commits asynchronously: it sets
``synchronous_commit = off`` for its own transaction only (``set_config(..., true)``), so it returns
without waiting for its WAL to reach the disk, which costs a trace nothing but, should the
database server itself crash, its last fraction of a second of events (never a torn or reordered
one). The audit trail, which sessions and leases rest on, keeps synchronous commits.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg

from grapharc.postgres.connect import conninfo
from grapharc.postgres.database import open_database
from grapharc.postgres.errors import PostgresStoreError, said
from grapharc.stores.masking import masked
from grapharc.trace.errors import TraceClosedError, TraceOpenError
from grapharc.trace.schema import RUN_ID, THREAD_ID

_INSERT = ("WITH asynchronous AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true)) "
           "INSERT INTO grapharc_trace_events (run_id, thread_id, line) SELECT r, t, l "
           "FROM asynchronous, unnest(%s::text[], %s::text[], %s::text[]) WITH ORDINALITY AS u(r, t, l, n) "
           "ORDER BY n")
"""One batch of lines, in order, in one statement that commits without waiting for the disk (the
setting lasts for the statement's own transaction, so the pooled connection keeps its default)."""
_FETCH_ROWS = 2000


class PostgresTraces:
    """The trace events table of the database ``uri``, borrowed (and so migrated) on opening until
    ``close``, or until the store is collected: readers open a store per read and never close it."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.name = masked(uri)
        self._database, self._give_back = open_database(uri, self)

    def open_sink(self) -> PostgresTraceSink:
        """A sink borrowing the database until it is closed."""
        return PostgresTraceSink(self.uri)

    @contextmanager
    def lines(self, *, run_id: str | None = None, thread_id: str | None = None) -> Iterator[Iterator[bytes]]:
        """The stored lines (of one run or thread, if named) in write order, read through a
        server-side cursor so a long trace is never held whole."""
        wanted = [(column, value) for column, value in (("run_id", run_id), ("thread_id", thread_id))
                  if value is not None]
        where = " AND ".join(f"{column} = %s" for column, _ in wanted)
        query = f"SELECT line FROM grapharc_trace_events {'WHERE ' + where if where else ''} ORDER BY seq"  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
        args = [value for _, value in wanted]
        with self._database.transaction() as conn:  # a named cursor lives in a transaction
            cursor = conn.cursor(name="grapharc_trace_lines")
            cursor.itersize = _FETCH_ROWS
            try:
                yield self._stream(cursor, query, args)
            finally:
                cursor.close()

    def _stream(self, cursor: psycopg.ServerCursor[Any], query: str, args: list[str]) -> Iterator[bytes]:
        try:
            cursor.execute(query, args)
            for row in cursor:
                yield row["line"].encode("utf-8") + b"\n"
        except psycopg.Error as exc:
            raise PostgresStoreError(
                f"cannot read the trace from {self.name}: {said(self.uri, exc)}") from None

    def close(self) -> None:
        """Give the database back (the last of its stores closes it); closing twice is harmless."""
        self._give_back()


class PostgresTraceSink:
    """Inserts each batch of lines with one statement; safe to share between threads, whose batches
    it writes one at a time (so rows commit in ``seq`` order)."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.name = masked(uri)
        self._database, self._give_back = open_database(uri, self)
        self._closed = False
        self._lock = threading.Lock()

    def write(self, events: Sequence[dict[str, Any]], lines: Sequence[bytes]) -> None:
        """Insert one row per line, in order, in one statement (so all or none)."""
        runs = [_text(event.get(RUN_ID)) for event in events]
        threads = [_text(event.get(THREAD_ID)) for event in events]
        texts = [line[:-1].decode("utf-8") for line in lines]
        with self._lock:
            if self._closed:
                raise TraceClosedError(f"the trace writer for {self.name} is closed")
            try:
                with self._database.pool.connection() as conn:
                    conn.execute(_INSERT, (runs, threads, texts))
            except psycopg.Error as exc:
                raise TraceOpenError(f"cannot write the trace to {self.name}: {said(self.uri, exc)}",
                                     hint="check the PostgreSQL server is up (pg_isready)") from None

    def close(self) -> None:
        """Give the database back; closing twice is harmless."""
        with self._lock:
            self._closed = True
        self._give_back()


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def open_traces(location: str, kind: str = "traces") -> PostgresTraces:
    """The store-hook factory behind ``postgres://`` and ``postgresql://`` for ``kind="traces"``."""
    return PostgresTraces(conninfo(location))
