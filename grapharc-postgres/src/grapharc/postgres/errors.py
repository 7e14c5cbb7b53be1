"""The error every PostgreSQL store failure becomes, and how a message names the store.

Its own module below the others, so the schema's migrations and the connections (which run
them) both raise it without importing each other.
"""

from __future__ import annotations

from grapharc.errors import GraphARCError


class PostgresStoreError(GraphARCError):
    """A PostgreSQL store that cannot be reached, read or written."""


def redacted(uri: str) -> str:
    """``uri`` with any password replaced, for messages."""
    head, at, tail = uri.rpartition("@")
    if not at or ":" not in head.removeprefix("postgresql://"):
        return uri
    user = head.removeprefix("postgresql://").split(":", 1)[0]
    return f"postgresql://{user}:***@{tail}"


def unreachable(uri: str, exc: Exception) -> PostgresStoreError:
    """The error for a server that cannot be connected to, naming the (redacted) store once, on one line."""
    said = " ".join(str(exc).split())  # libpq's message spans lines; an error is one line
    return PostgresStoreError(f"cannot open the PostgreSQL store {redacted(uri)}: {said}",
                              hint="check the server is running (pg_isready) and the URI's user and database")
