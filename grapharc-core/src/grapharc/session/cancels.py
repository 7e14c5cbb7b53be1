"""Cancelling a live turn: who asked, for which run, and whether what the run wrote goes with it.

A turn driven on the event loop stops where ``asyncio`` cancels its task; but a task is cancelled
for two reasons that must end differently. A process stopping leaves its turns to be reclaimed
(the thread is recorded failed, its turn kept, and another runner carries it on), while a cancel
someone asked for ends the turn for good: the thread goes back to where its last checkpoint
stands, idle or paused, its lease released. So whoever cancels a turn on purpose says so first,
in the manager's ``Cancels``, and the turn reads it as the cancellation reaches it
(``grapharc.session.turns``). A rollback also discards the checkpoints the run wrote (LangGraph
marks each with the ``run_id`` of the run that wrote it), so the thread's state is as it was
before the run, and reopens the approvals it answered (``grapharc.session.rollback``); the audit
trail, append-only, keeps every entry and records the cancel.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Cancel:
    """A cancel asked of a thread's live turn: ``by`` whom, for which ``run_id`` (the run whose
    checkpoints a ``rollback`` discards), whose part of the audit trail begins after seq ``since``
    (the answers recorded there are the run's, reopened by a rollback; None: it has begun none)."""

    by: str
    run_id: str | None = None
    rollback: bool = False
    since: int | None = None

    def detail(self) -> dict[str, str | None]:
        """The cancel as the audit trail records it."""
        return {"by": self.by, "run": self.run_id, "action": "rollback" if self.rollback else "interrupt"}


class Cancels:
    """The cancels asked of the turns this process drives, by thread: asked before the turn's task is
    cancelled, taken by the turn (or dropped by whoever asked, once the task has ended)."""

    def __init__(self) -> None:
        self._asked: dict[str, Cancel] = {}

    def ask(self, thread_id: str, cancel: Cancel) -> None:
        """Say that the next cancellation of the thread's turn here is ``cancel``."""
        self._asked[thread_id] = cancel

    def take(self, thread_id: str) -> Cancel | None:
        """The cancel asked of the thread's turn (forgotten now), or None: a cancellation nobody
        asked for, such as a stopping process's."""
        return self._asked.pop(thread_id, None)
