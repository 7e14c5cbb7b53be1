"""The error every PostgreSQL store failure becomes, and how a message names the store (its URI
with every credential masked: ``grapharc.stores.masking``).

Its own module below the others, so the schema's migrations and the connections (which run
them) both raise it without importing each other.
"""

from __future__ import annotations

import psycopg

from grapharc.errors import GraphARCError
from grapharc.stores.masking import masked, scrubbed


class PostgresStoreError(GraphARCError):
    """A PostgreSQL store that cannot be reached, read or written."""


def said(uri: str, exc: Exception) -> str:
    """What ``exc`` says about the store ``uri``, on one line (libpq's and the server's messages span
    lines: DETAIL, HINT) and with every credential of ``uri`` masked (libpq repeats parts of a URI
    it cannot parse)."""
    return scrubbed(" ".join(str(exc).split()), uri)


def out_of_reach(exc: psycopg.Error) -> bool:
    """Whether ``exc`` says the server cannot be reached, rather than that it refused a statement:
    libpq's own errors (no SQLSTATE, a pool's timeout among them), a connection exception (class
    08) or a server shutting down (57P)."""
    return exc.sqlstate is None or exc.sqlstate.startswith(("08", "57P"))


def store_failure(uri: str, exc: psycopg.Error) -> PostgresStoreError:
    """The error for ``exc`` met on the store ``uri``: ``unreachable`` if the server is out of reach,
    else what the server said (a deadlock, a constraint, a privilege), naming the store, on one line."""
    if out_of_reach(exc):
        return unreachable(uri, exc)
    return PostgresStoreError(f"PostgreSQL store {masked(uri)}: {said(uri, exc)}")


def unreachable(uri: str, exc: Exception) -> PostgresStoreError:
    """The error for a server that cannot be connected to, naming the (masked) store once, on one line."""
    return PostgresStoreError(f"cannot open the PostgreSQL store {masked(uri)}: {said(uri, exc)}",
                              hint="check the server is running (pg_isready) and the URI's user and database")
