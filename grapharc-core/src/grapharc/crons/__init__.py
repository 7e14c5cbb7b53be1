"""Cron schedules: runs a server starts on a cron expression, kept durably beside the sessions.

``grapharc.crons.contracts`` says what a cron store keeps and promises; ``grapharc.crons.schedule``
reads cron expressions (with ``croniter``) and time zones; ``grapharc.crons.manage`` makes and
changes schedules for the server's routes and the CLI. Names are exported lazily.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports

_LAZY_EXPORTS = {
    "CronRecord": "grapharc.crons.records",
    "CronFilter": "grapharc.crons.records",
    "CronStore": "grapharc.crons.contracts",
    "SqliteCronStore": "grapharc.sqlite.crons",
    **{name: "grapharc.crons.errors" for name in (
        "CronError", "CronStoreError", "UnknownCronError", "BadScheduleError", "UnknownTimezoneError",
        "BadEndTimeError")},
}

__all__ = sorted(_LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
