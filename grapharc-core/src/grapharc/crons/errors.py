"""The errors cron schedules raise on purpose, each naming the schedule, expression or zone at fault."""

from __future__ import annotations

from grapharc.errors import GraphARCError


class CronError(GraphARCError):
    """Something about a cron schedule that cannot be done as asked."""


class CronStoreError(CronError):
    """A cron store that cannot be opened, read or written."""


class UnknownCronError(CronError):
    """No cron schedule has the id given."""

    def __init__(self, cron_id: str) -> None:
        super().__init__(f"no cron {cron_id!r}", hint="POST /runs/crons/search (or grapharc cron list) "
                                                        "lists the schedules there are")


class BadScheduleError(CronError):
    """A cron expression croniter cannot read."""

    def __init__(self, schedule: str) -> None:
        super().__init__(f"schedule {schedule!r} is not a cron expression",
                         hint="five fields: minute hour day-of-month month day-of-week, e.g. '*/5 * * * *'")


class UnknownTimezoneError(CronError):
    """A time zone name the IANA database (``zoneinfo``) does not have."""

    def __init__(self, timezone: str) -> None:
        super().__init__(f"timezone {timezone!r} is not an IANA time zone name",
                         hint="e.g. 'UTC', 'Europe/Paris', 'America/New_York'")


class BadEndTimeError(CronError):
    """An ``end_time`` that is not an ISO 8601 date and time."""

    def __init__(self, end_time: str) -> None:
        super().__init__(f"end_time {end_time!r} is not an ISO 8601 date and time",
                         hint="e.g. '2027-01-31T00:00:00+00:00' (without an offset it is read as UTC)")
