"""The decisions made so far, a page at a time, as one user may see them.

The store lists every thread's decided approvals newest first (``SessionManager.decided``); a user
sees only those on threads they may read (``access.may_read``), so a page is filled by reading the
store in batches and skipping the others, on either side of a decision's mark (the next page: older
than the last shown; the previous page: newer than the first).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from grapharc.session.errors import UnknownSessionError
from grapharc.session.manager import SessionManager
from grapharc.session.records import Approval, DecisionMark, Session, decision_mark

BATCH = 50
"""Decisions read from the store at a time while a page is filled."""


@dataclass(frozen=True, slots=True)
class Decision:
    """A decided approval and the thread it was asked on."""

    approval: Approval
    thread: Session


@dataclass(frozen=True, slots=True)
class DecidedPage:
    """One page of decisions, newest first, and the marks of the pages beside it (None: no such page)."""

    decisions: list[Decision]
    newer: DecisionMark | None
    """Show the previous page as the decisions just after this mark (the page's first)."""
    older: DecisionMark | None
    """Show the next page as the decisions just before this mark (the page's last)."""


def decided_page(manager: SessionManager, readable: Callable[[Session], bool], size: int, *,
                 before: DecisionMark | None = None, after: DecisionMark | None = None) -> DecidedPage:
    """Up to ``size`` decisions on threads ``readable`` lets through, newest first: the newest,
    those just before ``before``, or those just after ``after`` (the first page if none is left)."""
    scan = _Scan(manager, readable)
    if after is not None:
        nearest = scan.take(older=False, mark=after, count=size + 1)
        if nearest:
            return _page(scan, nearest[:size][::-1], newer=len(nearest) > size, older=None)
        before = None
    found = scan.take(older=True, mark=before, count=size + 1)
    return _page(scan, found[:size], newer=None, older=len(found) > size)


def _page(scan: _Scan, shown: list[Decision], *, newer: bool | None, older: bool | None) -> DecidedPage:
    """``shown`` with the marks of the pages beside it; a side not known yet (None) is looked up."""
    if not shown:
        return DecidedPage([], None, None)
    first, last = decision_mark(shown[0].approval), decision_mark(shown[-1].approval)
    if newer is None:
        newer = bool(scan.take(older=False, mark=first, count=1))
    if older is None:
        older = bool(scan.take(older=True, mark=last, count=1))
    return DecidedPage(shown, first if newer else None, last if older else None)


class _Scan:
    """Reads the store's decisions in batches, keeping those on readable threads (each thread read once)."""

    def __init__(self, manager: SessionManager, readable: Callable[[Session], bool]) -> None:
        self.manager = manager
        self.readable = readable
        self.threads: dict[str, Session | None] = {}

    def take(self, *, older: bool, mark: DecisionMark | None, count: int) -> list[Decision]:
        """Up to ``count`` readable decisions nearest ``mark`` on its older (or newer) side, nearest first."""
        taken: list[Decision] = []
        for decision in self._nearest(older, mark):
            taken.append(decision)
            if len(taken) >= count:
                break
        return taken

    def _nearest(self, older: bool, mark: DecisionMark | None) -> Iterator[Decision]:
        while True:
            batch = (self.manager.decided(BATCH, before=mark) if older
                     else self.manager.decided(BATCH, after=mark)[::-1])
            for approval in batch:
                thread = self._thread(approval.thread_id)
                if thread is not None and self.readable(thread):
                    yield Decision(approval, thread)
            if len(batch) < BATCH:
                return
            mark = decision_mark(batch[-1])

    def _thread(self, thread_id: str) -> Session | None:
        """The thread (None: deleted since its decision was read)."""
        if thread_id not in self.threads:
            try:
                self.threads[thread_id] = self.manager.get(thread_id)
            except UnknownSessionError:
                self.threads[thread_id] = None
        return self.threads[thread_id]
