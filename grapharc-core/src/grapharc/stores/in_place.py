"""A store call run in place on the event loop's thread, all of it or none, where nothing in it waits.

A trip to the store pool (``grapharc.stores.offload``) costs the loop a hand-off each way, more
than a short SQLite statement. A store that can refuse at once where it would wait (SQLite with no
busy timeout: a file busy with another connection's write answers ``SQLITE_BUSY``, a connection
another thread holds is not taken) says so with ``WRITES_ON_LOOP``, and a call over such stores
may run in an ``InPlace`` scope (``run``): each database the call changes joins one transaction
of the scope, opened without waiting and committed when the call returns (or raises: what it
changed before stays changed, as when each change committed on its own). Where anything would
wait, the store raises ``WouldWait``; the scope then rolls back every transaction it joined, so
nothing of the call is written however it went on (a call that catches the error included), and
the caller runs the whole call again where waiting is harmless (``offload.nearby``: in the store
pool). Hand-written: the scope is a few lines over the stores' own transactions, not a library's.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import ParamSpec, Protocol, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")


class WouldWait(Exception):
    """Raised by a store inside an ``InPlace`` scope where going on would wait; the scope's call is
    then undone and sent where it may wait."""


class Transaction(Protocol):
    """A transaction a store opened for the scope: ended once, committed or rolled back."""

    def end(self, commit: bool) -> None: ...


class InPlace:
    """The scope of one call run in place: the transactions its stores joined, and whether any
    store found it would wait."""

    def __init__(self) -> None:
        self._joined: dict[object, Transaction] = {}
        self.waits = False
        self.running = True
        """False once the call returned: a task it made, which copied the scope with its context,
        runs its store calls as any other, not in a scope already ended."""

    def joined(self, database: object) -> Transaction | None:
        """The transaction ``database`` joined to this scope, if any."""
        return self._joined.get(database)

    def join(self, database: object, transaction: Transaction) -> None:
        """Keep ``transaction`` of ``database`` open to the scope's end."""
        self._joined[database] = transaction

    def would_wait(self) -> WouldWait:
        """Mark the scope as one that would wait (its call is undone whatever it does next); the error
        for the store to raise."""
        self.waits = True
        return WouldWait("a store call on the event loop would wait")

    def end(self, commit: bool) -> None:
        """Commit (or roll back) every transaction joined, each once."""
        joined, self._joined = list(self._joined.values()), {}
        try:
            while joined:
                joined.pop(0).end(commit)
        finally:  # one failed to commit: the rest roll back rather than stay open
            for transaction in joined:
                transaction.end(False)


_scope: ContextVar[InPlace | None] = ContextVar("grapharc_in_place", default=None)


def current() -> InPlace | None:
    """The scope of the call running in place here, if one is."""
    scope = _scope.get()
    return scope if scope is not None and scope.running else None


def run(func: Callable[_P, _R], /, *args: _P.args, **kwargs: _P.kwargs) -> tuple[bool, _R | None]:
    """``func(*args, **kwargs)`` in an ``InPlace`` scope: ``(True, result)``, its changes committed;
    ``(False, None)``, nothing of it written, where a store found it would wait."""
    scope = InPlace()
    token = _scope.set(scope)
    try:
        try:
            result = func(*args, **kwargs)
        finally:
            scope.running = False
            _scope.reset(token)
    except BaseException:
        scope.end(commit=not scope.waits)
        if scope.waits:
            return False, None
        raise
    scope.end(commit=not scope.waits)
    return (False, None) if scope.waits else (True, result)
