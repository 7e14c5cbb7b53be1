"""What the SQL session store asks of a database driver, and its statements in a dialect.

``grapharc.session.sql_store`` writes statements with ``?`` parameters and
``{sessions}``-style table names and runs them on any connection shaped like
``Connection`` (``sqlite3``, psycopg 3); ``dialect_sql`` turns them into a dialect's.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any, Protocol

TABLES = ("sessions", "approvals", "events", "audit")
"""The store's tables, as the statements here name them (a dialect may prefix them)."""


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
    return sql.format_map({table: prefix + table for table in TABLES}).replace("?", param)
