"""What a cron store keeps and promises, so any backend registered for the ``crons`` kind serves a
server (``open_store("sqlite:DIR", kind="crons")``, ``open_store("postgresql://HOST/DB", kind="crons")``).

The store is shared by every ``grapharc serve`` process on one location; ``claim_slot`` is how
their schedulers agree that a slot fires once. ``grapharc.testing.cron_store_kit`` pins what
these docstrings promise.
"""

from __future__ import annotations

import builtins  # `builtins.list` in annotations
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from grapharc.crons.records import CronFilter, CronRecord

Revise = Callable[["CronRecord"], "CronRecord"]
"""Given a schedule as it stands, the schedule as it is to be (its id and creation time are kept)."""


@runtime_checkable
class CronStore(Protocol):
    """Cron schedules. Every change is atomic across threads and processes; an unknown schedule
    raises ``UnknownCronError``; nothing is written when a call raises."""

    def add(self, cron: CronRecord) -> CronRecord:
        """Keep a new schedule (its ``cron_id`` not yet taken); returned as stored."""
        ...

    def get(self, cron_id: str) -> CronRecord:
        """The schedule ``cron_id``."""
        ...

    def search(self, where: CronFilter, *, limit: int | None = None, offset: int = 0,
               sort_by: str = "created_at", descending: bool = True) -> builtins.list[CronRecord]:
        """The schedules ``where`` admits, sorted by ``sort_by`` (a key of
        ``grapharc.crons.records.SORT_COLUMNS``; ties by id), at most ``limit`` after ``offset``."""
        ...

    def count(self, where: CronFilter) -> int:
        """How many schedules ``where`` admits."""
        ...

    def update(self, cron_id: str, revise: Revise) -> CronRecord:
        """Replace the schedule with ``revise`` of it, the row locked meanwhile (a racing update or
        claim waits); its id and ``created_at`` stay."""
        ...

    def delete(self, cron_id: str) -> None:
        """Remove the schedule (its runs stay)."""
        ...

    def due(self, now: float) -> builtins.list[CronRecord]:
        """Enabled schedules whose ``next_run_at`` is not after ``now``, the most overdue first (a
        read: nothing is written)."""
        ...

    def next_due(self) -> float | None:
        """The earliest ``next_run_at`` of the enabled schedules (None when none has one): a read
        that writes nothing, so an idle scheduler's look costs no write."""
        ...

    def claim_slot(self, cron_id: str, slot: float, next_run_at: float | None) -> bool:
        """Move an enabled schedule whose ``next_run_at`` is still ``slot`` on to ``next_run_at``:
        True for the one caller that did (it fires the slot), False for every other (another
        scheduler claimed it, or the schedule changed or went)."""
        ...

    def close(self) -> None:
        """Release connections; closing twice is harmless."""
        ...
