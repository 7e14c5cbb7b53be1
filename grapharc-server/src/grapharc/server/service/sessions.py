"""The server process's one SessionManager, and what the routes and pages read through it.

The API opens it with the operator's graphs registered (``grapharc.server.api.context``); a server
with only the inbox opens it as the app starts. The app closes it as it stops, and no request
opens a manager of its own (for PostgreSQL each was a connection, a migration check and a pool),
but a decision on a thread of a graph this process did not register, which is carried on by a
manager that registers the thread's graph (``driver_for``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from grapharc.errors import GraphARCError
from grapharc.session.asked import asked_about
from grapharc.session.contracts import SignInRecords
from grapharc.session.errors import SessionStoreError
from grapharc.session.manager import SessionManager
from grapharc.session.records import OPEN, Approval, Session
from grapharc.stores import offload


@dataclass(frozen=True, slots=True)
class Pending:
    """An open approval and the graph of the thread that waits on it (and the thread, whose owner
    says who may read it)."""

    approval: Approval
    graph: str
    thread: Session


@dataclass(frozen=True, slots=True)
class Details:
    """What it takes to decide one approval: the record, its thread, and what it asks about."""

    approval: Approval
    session: Session
    asked: Any = None
    """What an open approval asks about beyond its question: a gate's chosen arguments, or what an
    interrupt's value carries besides the question (None: nothing more, or decided)."""
    unreadable: str | None = None
    """Why what it asks about cannot be shown, if it cannot."""


class Sessions:
    """The sessions as this process serves them, through its one ``manager``."""

    def __init__(self, manager: SessionManager) -> None:
        self.manager = manager
        store = manager.store  # checked once: a protocol's isinstance is slow
        self._sign_ins: SignInRecords | None = store if isinstance(store, SignInRecords) else None

    def sign_ins(self) -> SignInRecords:
        """The store's sign-in records (signed-out page sessions, failed sign-ins), which the pages
        need; ``SessionStoreError`` for a store that keeps none."""
        if self._sign_ins is None:
            raise SessionStoreError(f"the session store at {self.manager.location} keeps no sign-in records, "
                                    "which the sign-in pages need",
                                    hint="serve the pages over a store that does (sqlite:, postgresql:)")
        return self._sign_ins

    @classmethod
    def open(cls, location: str) -> Sessions:
        """The sessions at ``location``, with a manager of their own (registering no graph)."""
        return cls(SessionManager(location))

    def read_on_loop_with(self, runs: object) -> bool:
        """Whether a stream may read ``runs``, the session trail and their checkpoints on the event
        loop rather than in a trip to the store pool: every one of those stores allows it
        (``offload.reads_on_loop``)."""
        return offload.reads_on_loop(runs, self.manager.store, self.manager.checkpoints)

    def serves(self, graph: str) -> bool:
        """Whether this process registered ``graph``, so its run worker carries its threads on."""
        return graph in self.manager.graphs.names()

    def approval(self, approval_id: str) -> Approval:
        """The approval ``approval_id`` (``UnknownApprovalError`` if none)."""
        return self.manager.approval(approval_id)

    def thread(self, thread_id: str) -> Session:
        """Where the thread ``thread_id`` stands (``UnknownSessionError`` if none)."""
        return self.manager.get(thread_id)

    def pending(self) -> list[Pending]:
        """Every open approval of every paused thread, the oldest asked first."""
        found = [Pending(hold, session.graph, session) for session in self.manager.list("paused")
                 for hold in session.holds if hold.state == OPEN]
        return sorted(found, key=lambda p: p.approval.created_at)

    def details(self, approval_id: str) -> Details:
        """The approval ``approval_id`` with its thread and what it asks about."""
        approval = self.approval(approval_id)
        session = self.thread(approval.thread_id)
        if approval.state != OPEN:
            return Details(approval, session)
        try:
            asked = asked_about(self.manager, approval, session)
        except GraphARCError as exc:
            return Details(approval, session, unreadable=str(exc))
        return Details(approval, session, _beyond(asked, approval.question))

    def saved_values(self, thread_id: str) -> dict[str, Any]:
        """The thread's state as its newest checkpoint saved it, read without its graph (which this
        process may not have registered): every channel, LangGraph's own included."""
        config: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        saved = self.manager.checkpointer.get_tuple(config)
        return dict(saved.checkpoint["channel_values"]) if saved is not None else {}

    def scanned_at(self, thread_id: str, step: int, *, values: bool = False) -> Any:
        """The checkpoint of superstep ``step`` as a live turn of the thread here last scanned it
        (None: none, or ``values`` wanted and not read), so a stream renders a node without
        reading it again."""
        return self.manager.scanned_at(thread_id, step, values=values)

    @asynccontextmanager
    async def driver_for(self, thread_id: str) -> AsyncIterator[SessionManager]:
        """A manager of its own over these sessions with the graph of ``thread_id`` registered as
        ``grapharc session approve`` registers it (a rebuilt agent, a demo graph), closed after."""
        from grapharc.governed.known_graphs import register_thread_graph

        manager = await offload.to_thread(SessionManager, self.manager.location)
        try:
            await offload.to_thread(register_thread_graph, manager, thread_id)
            yield manager
        finally:
            await manager.aclose()

    async def aclose(self) -> None:
        """Close the manager (its async checkpointer on this loop, then its stores)."""
        await self.manager.aclose()


def _beyond(asked: Any, question: str) -> Any:
    """What ``asked`` says besides ``question``, which the page already shows (None: nothing)."""
    if isinstance(asked, str) and asked == question:
        return None
    if isinstance(asked, dict) and asked.get("question") == question:
        rest = {key: value for key, value in asked.items() if key != "question"}
        return rest or None
    return asked
