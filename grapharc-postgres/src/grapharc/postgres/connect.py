"""From a store location to a PostgreSQL connection string and a connection.

``split_uri`` drops the ``//`` after the scheme, so ``postgresql://user@host/db`` arrives
here as ``user@host/db``; the libpq URI is rebuilt from it, query parameters included.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row

from grapharc.postgres.errors import PostgresStoreError, unreachable


def conninfo(location: str) -> str:
    """The libpq URI for a ``postgres://`` store location."""
    if not location.strip("/"):
        raise PostgresStoreError("a postgres store needs a server and a database, as in "
                                 "postgresql://user@127.0.0.1:5432/grapharc")
    return f"postgresql://{location}"


CONNECT_TIMEOUT_SECONDS = 10
"""How long opening a connection may take when the URI does not say (libpq's ``connect_timeout``):
a host that accepts and never answers is an error after this long, not a wait without end."""


def connect_timeout(uri: str) -> dict[str, Any]:
    """``connect_timeout`` for a connection to ``uri``, unless the URI's query names its own."""
    return {} if "connect_timeout=" in uri.partition("?")[2] else {"connect_timeout": CONNECT_TIMEOUT_SECONDS}


def connect(uri: str, **kwargs: Any) -> psycopg.Connection[dict[str, Any]]:
    """One connection with dict rows, or ``PostgresStoreError`` naming the server."""
    try:
        return psycopg.connect(uri, row_factory=dict_row, **connect_timeout(uri), **kwargs)
    except psycopg.Error as exc:
        raise unreachable(uri, exc) from exc
