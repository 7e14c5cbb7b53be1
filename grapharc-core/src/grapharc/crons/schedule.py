"""When a schedule fires: its cron expression read by ``croniter`` in its IANA time zone.

A slot is an instant the expression names in the schedule's zone (UTC when it names none), so
``0 9 * * *`` in ``Europe/Paris`` fires at nine in Paris across daylight-saving changes.
``following`` gives the first slot after an instant, or None past the schedule's ``end_time``:
a scheduler that finds slots it missed (nothing ran) asks for the first one after *now*, so the
missed slots are one catch-up run, never a burst.
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterError, croniter

from grapharc.crons.errors import BadEndTimeError, BadScheduleError, UnknownTimezoneError


def check_schedule(schedule: str) -> str:
    """``schedule`` if croniter reads it and it names at least one instant, else ``BadScheduleError``."""
    if not isinstance(schedule, str) or not schedule.strip() or not croniter.is_valid(schedule):
        raise BadScheduleError(str(schedule))
    next_slot(schedule, None, 0.0)  # '0 0 31 2 *' reads, but names no day
    return schedule


def zone(timezone: str | None) -> ZoneInfo:
    """The IANA zone ``timezone`` names (UTC for None), or ``UnknownTimezoneError`` naming it."""
    if timezone is None:
        return ZoneInfo("UTC")
    try:
        return ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise UnknownTimezoneError(str(timezone)) from None


def next_slot(schedule: str, timezone: str | None, after: float) -> float:
    """The first instant (epoch seconds) after ``after`` that ``schedule`` names in ``timezone``."""
    start = datetime.fromtimestamp(after, zone(timezone))
    try:
        return float(croniter(schedule, start).get_next(float))
    except (CroniterError, ValueError, KeyError):
        raise BadScheduleError(schedule) from None


def following(schedule: str, timezone: str | None, end_time: float | None, after: float) -> float | None:
    """The schedule's first slot after ``after``; None if it falls after ``end_time``."""
    slot = next_slot(schedule, timezone, after)
    return None if end_time is not None and slot > end_time else slot


def end_time_of(text: str | None) -> float | None:
    """An ISO 8601 ``end_time`` as epoch seconds (UTC when it has no offset); None for None."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise BadEndTimeError(str(text)) from None
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).timestamp()
