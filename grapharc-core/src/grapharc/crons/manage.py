"""Making, changing and opening schedules: what the server's cron routes and ``grapharc cron``
both call, so a schedule is checked and timed the same way whichever made it."""

from __future__ import annotations

import dataclasses
import os
import uuid
from typing import Any

from grapharc.crons.contracts import CronStore
from grapharc.crons.errors import CronStoreError
from grapharc.crons.records import CronRecord
from grapharc.crons.schedule import check_schedule, following, zone
from grapharc.stores.masking import masked
from grapharc.stores.uris import open_store, store_uri

TIMING = ("schedule", "timezone", "end_time", "enabled")
"""The fields whose change sets the schedule's next slot again, counted from the change."""


def new_cron(*, assistant_id: str, schedule: str, payload: dict[str, Any], now: float,
             thread_id: str | None = None, timezone: str | None = None, end_time: float | None = None,
             enabled: bool = True, metadata: dict[str, Any] | None = None, user_id: str | None = None,
             on_run_completed: str | None = None) -> CronRecord:
    """A new schedule with a fresh id, its expression and zone checked (``BadScheduleError``,
    ``UnknownTimezoneError``) and its first slot the first after ``now``."""
    cron = CronRecord(cron_id=str(uuid.uuid4()), assistant_id=assistant_id, schedule=schedule,
                      payload=payload, created_at=now, updated_at=now, next_run_at=None,
                      thread_id=thread_id, timezone=timezone, end_time=end_time, enabled=enabled,
                      metadata=dict(metadata or {}), user_id=user_id, on_run_completed=on_run_completed)
    return timed(cron, now)


def revised(current: CronRecord, changes: dict[str, Any], now: float) -> CronRecord:
    """``current`` with ``changes`` (fields of ``CronRecord``) made at ``now``; a change of its
    timing (``TIMING``) sets its next slot again, the first after ``now``."""
    cron = dataclasses.replace(current, **changes, updated_at=now)
    return timed(cron, now) if any(name in changes for name in TIMING) else cron


def timed(cron: CronRecord, now: float) -> CronRecord:
    """``cron`` checked, its next slot the first after ``now`` (None past its end time)."""
    check_schedule(cron.schedule)
    zone(cron.timezone)
    return dataclasses.replace(cron, next_run_at=following(cron.schedule, cron.timezone, cron.end_time, now))


def open_crons(location: str | os.PathLike[str]) -> CronStore:
    """The cron store of the sessions at ``location`` (beside their run store)."""
    store = open_store(store_uri(location, "crons"), kind="crons")
    if not isinstance(store, CronStore):
        raise CronStoreError(f"the crons store for {masked(str(location))} is {type(store).__name__!r}, "
                             "not a CronStore", hint="the distribution that registered its scheme must "
                                                     "return one (see grapharc.crons.contracts)")
    return store
