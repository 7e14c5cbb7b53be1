"""What a run store keeps and promises, so any backend registered for the ``runs`` kind serves a server.

A ``RunStore`` is the durable record of every run and the queue workers take them from, shared by
every ``grapharc serve`` process on one location (``open_store("sqlite:DIR", kind="runs")``,
``open_store("postgresql://HOST/DB", kind="runs")``). A thread's runs execute one at a time in the
order they were added; a worker claims a run for a while (``ttl`` seconds) and keeps renewing the
claim, so a run whose claim ran out lost its worker. ``grapharc.testing.run_store_kit`` pins what
these docstrings promise.
"""

from __future__ import annotations

import builtins  # `builtins.list` in annotations
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from grapharc.runs.records import LiveEvent, RunRecord


@runtime_checkable
class RunStore(Protocol):
    """Runs and their queue. Every change is atomic across threads and processes; an unknown run
    raises ``UnknownRunError``; nothing is written when a call raises."""

    def add(self, run: RunRecord, *, exclusive: bool) -> RunRecord:
        """Keep ``run`` as pending, last in the queue; returned with its ``seq``. ``exclusive``:
        refuse it with ``ThreadBusyError`` if another run of its thread is pending or running."""
        ...

    def add_claimed(self, run: RunRecord, worker: str, now: float, ttl: float) -> RunRecord:
        """Keep ``run`` as already running for ``worker`` until ``now + ttl`` (first attempt): a
        run for a turn that ``worker``'s process began before the run existed (an inbox decision
        claims its thread), which no other worker may claim while that claim holds."""
        ...

    def get(self, thread_id: str, run_id: str) -> RunRecord:
        """The run ``run_id`` of ``thread_id``."""
        ...

    def of_thread(self, thread_id: str, *, status: str | None = None, limit: int | None = None,
                  offset: int = 0) -> builtins.list[RunRecord]:
        """The thread's runs, newest first: only those in ``status`` if given, and with ``limit``
        at most that many after skipping ``offset`` (an offset needs a limit: ``check_page``)."""
        ...

    def claim_next(self, worker: str, now: float, ttl: float, graphs: Sequence[str]) -> RunRecord | None:
        """Take the oldest runnable pending run of one of ``graphs`` (the graphs ``worker`` can drive;
        runnable: the first pending run of a thread none of whose runs is running, whose
        ``not_before`` is not after ``now``) for ``worker``
        until ``now + ttl``; None when no run is runnable. Of workers racing for one run exactly
        one gets it."""
        ...

    def begin(self, run_id: str, worker: str, after_seq: int) -> bool:
        """Record where the run's part of the audit trail begins, once, as ``worker`` starts its turn;
        False, and nothing written, when the run is not that worker's or already began."""
        ...

    def heartbeat(self, worker: str, now: float, ttl: float) -> builtins.list[str]:
        """Extend every claim ``worker`` holds to ``now + ttl``; the ids of those of its runs
        whose cancel was requested (one round trip per tick of a worker's loop)."""
        ...

    def has_work(self, worker: str, now: float, graphs: Sequence[str]) -> bool:
        """Whether a tick of ``worker`` (driving ``graphs``) has anything to take or stop at ``now``:
        a cancel requested of one of its running runs, a stale run of one of ``graphs``, or a
        runnable one (as ``claim_next`` takes). A read that writes nothing, so a worker whose
        claims need no renewing yet can look without a write each tick."""
        ...

    def finish(self, run_id: str, worker: str, status: str, now: float, *, end_seq: int,
               error: str | None = None) -> bool:
        """End a run ``worker`` holds with ``status`` (success, error or interrupted); False, and
        nothing written, when the run is no longer that worker's (another reclaimed it)."""
        ...

    def request_cancel(self, thread_id: str, run_id: str, now: float, *, by: str = "api",
                       action: str = "interrupt") -> RunRecord:
        """Cancel a run: a pending one ends ``interrupted`` at once (``action`` ``rollback``: it is
        deleted; the record returned is the one deleted); a running one is flagged for its worker to
        stop, its request saying ``by`` whom and the ``action`` (``RunRecord.cancel``); an ended one
        is left as it is."""
        ...

    def unended(self, statuses: Sequence[str] = ("pending", "running")) -> builtins.list[RunRecord]:
        """Every run of any thread in one of ``statuses`` (pending, running or both), oldest first."""
        ...

    def delete(self, thread_id: str, run_id: str, *, rolled_back: bool = False) -> None:
        """Remove an ended run's record and its live log (its thread's audit trail keeps its
        entries); a run still pending or running is refused with ``RunInFlightError`` unless its
        worker deletes it as ``rolled_back``; an unknown run is ``UnknownRunError``."""
        ...

    def stale(self, now: float) -> builtins.list[RunRecord]:
        """Running runs whose claim expired before ``now`` (their worker stopped renewing), oldest first."""
        ...

    def reclaim(self, run_id: str, worker: str, now: float, ttl: float) -> RunRecord | None:
        """Take over a stale run for ``worker`` (one more attempt); None if it is not stale any more
        (another worker reclaimed it, or it ended)."""
        ...

    def append_live(self, run_id: str, thread_id: str, events: Sequence[LiveEvent]) -> None:
        """Add ``events`` to the run's live log, all or none (their ``n`` follow the log's last)."""
        ...

    def live_after(self, run_id: str, after: int) -> builtins.list[LiveEvent]:
        """The run's live events numbered past ``after``, in order."""
        ...

    def last_live(self, run_id: str) -> int:
        """The number of the run's last live event (0: none)."""
        ...

    def forget_live(self, thread_id: str) -> None:
        """Delete the live logs of every run of ``thread_id`` (the thread is being deleted)."""
        ...

    def close(self) -> None:
        """Release connections; closing twice is harmless."""
        ...


def check_page(limit: int | None, offset: int) -> None:
    """Refuse a page no store can serve: a negative limit or offset, or an offset without a limit."""
    if (limit is not None and limit < 0) or offset < 0 or (limit is None and offset):
        raise ValueError(f"a page needs limit >= 0 and offset >= 0, an offset only with a limit; "
                         f"got limit={limit!r}, offset={offset!r}")


def refreshed(store: RunStore, run: RunRecord) -> RunRecord:
    """``run`` as it stands now in ``store``: the store's own ``refreshed(run)`` where it has one (a
    read of only what changes as a run goes on; the SQL stores have one), else ``get``. Not part of
    the protocol, so a store without it still serves."""
    refresh = getattr(store, "refreshed", None)
    return refresh(run) if refresh is not None else store.get(run.thread_id, run.run_id)
