"""What the SQL stores ask of a database driver, and their statements in a dialect.

``grapharc.session.sql_store``, ``grapharc.runs.sql_store``, ``grapharc.assistants.sql_store``
and ``grapharc.crons.sql_store`` write statements with ``?`` parameters and ``{sessions}``-style
table names and run them on any connection shaped like ``Connection`` (``sqlite3``, psycopg 3);
``dialect_sql`` turns them into a dialect's, and ``SqlDialect`` holds what a store's subclass
says of its dialect.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any, Protocol

from grapharc.session.errors import UnstorableTextError

TABLES = ("sessions", "approvals", "events", "audit")
"""The session store's tables, as the statements here name them (a dialect may prefix them)."""
RUN_TABLES = ("runs", "run_stream")
"""The run store's tables, named the same way."""
SIGN_IN_TABLES = ("sign_in_revoked", "sign_in_failures")
"""The session store's sign-in records (``grapharc.session.sql_sign_ins``), named the same way."""
ASSISTANT_TABLES = ("assistants", "assistant_versions", "assistant_changes")
"""The assistant store's tables (``grapharc.assistants.sql_store``), named the same way."""
CRON_TABLES = ("crons",)
"""The cron store's table (``grapharc.crons.sql_store``), named the same way."""


class Row(Protocol):
    """A fetched row, read by column name (``sqlite3.Row``, psycopg's dict rows)."""

    def __getitem__(self, key: str, /) -> Any: ...


class Cursor(Protocol):
    """What the store reads back from a statement."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """A DB-API connection that runs a statement directly (``sqlite3``, psycopg 3)."""

    def execute(self, sql: str, parameters: tuple[Any, ...] = ..., /) -> Cursor: ...


@lru_cache(maxsize=512)
def dialect_sql(sql: str, prefix: str, param: str) -> str:
    """``sql`` with ``{table}`` names prefixed and ``?`` parameters written as ``param``."""
    names = {table: prefix + table for table in (*TABLES, *RUN_TABLES, *SIGN_IN_TABLES, *ASSISTANT_TABLES,
                                                    *CRON_TABLES)}
    return sql.format_map(names).replace("?", param)


class SqlDialect:
    """How a SQL store's database writes what differs between databases; SQLite's by default."""

    PARAM = "?"
    """How the database writes a query parameter."""
    PREFIX = ""
    """What the database's table names start with."""
    LOCK = ""
    """The clause that locks a read row until the transaction ends (none where a write
    transaction locks the whole database)."""
    CLAIM_LOCK = ""
    """The clause that locks a row for a claim, skipping a row another claim has locked."""

    def _run(self, conn: Connection, sql: str, args: tuple[Any, ...] = ()) -> Cursor:
        """Run a statement written with ``?`` and ``{table}`` in this dialect; text UTF-8 cannot
        encode (a lone surrogate) is refused with ``UnstorableTextError`` quoting it, where the
        driver would only say which codec failed."""
        try:
            return conn.execute(dialect_sql(sql, self.PREFIX, self.PARAM), args)
        except UnicodeEncodeError as exc:
            if isinstance(exc.object, str) and "surrogate" in exc.reason:
                raise UnstorableTextError(exc.object, exc.start) from None
            raise
