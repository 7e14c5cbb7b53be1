"""From a store location to a PostgreSQL connection string, and the error every failure becomes.

``split_uri`` drops the ``//`` after the scheme, so ``postgresql://user@host/db`` arrives
here as ``user@host/db``; the libpq URI is rebuilt from it, query parameters included.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row

from grapharc.errors import GraphARCError


class PostgresStoreError(GraphARCError):
    """A PostgreSQL store that cannot be reached, read or written."""


def conninfo(location: str) -> str:
    """The libpq URI for a ``postgres://`` store location."""
    if not location.strip("/"):
        raise PostgresStoreError("a postgres store needs a server and a database, as in "
                                 "postgresql://user@127.0.0.1:5432/grapharc")
    return f"postgresql://{location}"


def redacted(uri: str) -> str:
    """``uri`` with any password replaced, for messages."""
    head, at, tail = uri.rpartition("@")
    if not at or ":" not in head.removeprefix("postgresql://"):
        return uri
    user = head.removeprefix("postgresql://").split(":", 1)[0]
    return f"postgresql://{user}:***@{tail}"


def connect(uri: str, **kwargs: Any) -> psycopg.Connection[dict[str, Any]]:
    """One connection with dict rows, or ``PostgresStoreError`` naming the server."""
    try:
        return psycopg.connect(uri, row_factory=dict_row, **kwargs)
    except psycopg.Error as exc:
        raise unreachable(uri, exc) from exc


def unreachable(uri: str, exc: Exception) -> PostgresStoreError:
    said = " ".join(str(exc).split())  # libpq's message spans lines; an error is one line
    return PostgresStoreError(f"cannot open the PostgreSQL store {redacted(uri)}: {said}",
                              hint="check the server is running (pg_isready) and the URI's user and database")
