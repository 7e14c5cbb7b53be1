"""A cron schedule as its store keeps it, and what a search of schedules asks for.

``payload`` is the body of the run each slot starts, as a run-starting request takes it
(``assistant_id``, ``input``, ``config``, ``context``, ``metadata``, ``multitask_strategy``,
``webhook``...), kept as given and checked again when a slot fires. ``next_run_at`` is the slot the
schedule fires at next (epoch seconds; None once ``end_time`` is past, or while it is disabled
and was never due): the scheduler claims a slot by moving it on (``CronStore.claim_slot``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from grapharc.session.records import iso

SORT_COLUMNS = {"cron_id": "cron_id", "assistant_id": "assistant_id", "thread_id": "thread_id",
                "created_at": "created_at", "updated_at": "updated_at", "next_run_date": "next_run_at",
                "end_time": "end_time"}
"""What a search may sort by (the SDK's names) and the column each is."""

_ABSENT = object()

CRON_ID, CRON_SLOT = "cron_id", "cron_slot"
"""The keys of a run's metadata naming the schedule that started it and the slot it fired for."""


@dataclass(frozen=True, slots=True)
class CronRecord:
    """One schedule: which assistant it runs on which thread (None: a new thread each time), when."""

    cron_id: str
    assistant_id: str
    schedule: str
    payload: dict[str, Any]
    created_at: float
    updated_at: float
    next_run_at: float | None
    thread_id: str | None = None
    timezone: str | None = None
    end_time: float | None = None
    enabled: bool = True
    metadata: dict[str, Any] = field(default_factory=dict)
    user_id: str | None = None
    on_run_completed: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The schedule as LangGraph's SDK reads a ``Cron`` (times in ISO 8601, UTC)."""
        return {"cron_id": self.cron_id, "assistant_id": self.assistant_id, "thread_id": self.thread_id,
                "on_run_completed": self.on_run_completed, "end_time": iso(self.end_time),
                "schedule": self.schedule, "timezone": self.timezone, "created_at": iso(self.created_at),
                "updated_at": iso(self.updated_at), "payload": self.payload, "user_id": self.user_id,
                "next_run_date": iso(self.next_run_at), "metadata": self.metadata, "enabled": self.enabled}


@dataclass(frozen=True, slots=True)
class CronFilter:
    """Which schedules a search or count takes: each field given must match (``metadata``: every
    pair it holds is in the schedule's)."""

    assistant_id: str | None = None
    thread_id: str | None = None
    enabled: bool | None = None
    user_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def admits(self, cron: CronRecord) -> bool:
        """Whether ``cron`` matches every condition (a store may test the columns in SQL first)."""
        columns = ((self.assistant_id, cron.assistant_id), (self.thread_id, cron.thread_id),
                   (self.enabled, cron.enabled), (self.user_id, cron.user_id))
        return (all(asked is None or asked == kept for asked, kept in columns)
                and all(cron.metadata.get(key, _ABSENT) == value for key, value in self.metadata.items()))

COLUMNS = ("cron_id", "assistant_id", "thread_id", "schedule", "timezone", "payload", "metadata", "enabled",
           "end_time", "next_run_at", "created_at", "updated_at", "user_id", "on_run_completed")
"""The crons table's columns, in the order ``row_values`` gives them."""


def row_values(cron: CronRecord) -> tuple[Any, ...]:
    """The values a store writes for ``cron``, in ``COLUMNS`` order (JSON kept as text)."""
    return (cron.cron_id, cron.assistant_id, cron.thread_id, cron.schedule, cron.timezone,
            json.dumps(cron.payload, ensure_ascii=False), json.dumps(cron.metadata, ensure_ascii=False),
            cron.enabled, cron.end_time, cron.next_run_at, cron.created_at, cron.updated_at, cron.user_id,
            cron.on_run_completed)


def record_of(row: Any) -> CronRecord:
    """A store row (read by column name) as a record."""
    return CronRecord(
        cron_id=row["cron_id"], assistant_id=row["assistant_id"], thread_id=row["thread_id"],
        schedule=row["schedule"], timezone=row["timezone"], payload=json.loads(row["payload"]),
        metadata=json.loads(row["metadata"]), enabled=bool(row["enabled"]), end_time=row["end_time"],
        next_run_at=row["next_run_at"], created_at=row["created_at"], updated_at=row["updated_at"],
        user_id=row["user_id"], on_run_completed=row["on_run_completed"])
