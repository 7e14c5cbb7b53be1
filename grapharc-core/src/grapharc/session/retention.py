"""Retention: finished sessions older than a duration go, with their checkpoints and holds.

A paused or running session is never removed, however old: someone may still answer
it, or its runner may still be alive. Both files are vacuumed afterwards so the space
goes back to the disk, not just to SQLite's free list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grapharc.session.errors import DurationError
from grapharc.session.store import SqliteSessionStore

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_PART = re.compile(r"(\d+)([smhdw])")


def parse_duration(text: str) -> float:
    """Seconds in a duration such as ``90s``, ``15m``, ``12h``, ``7d``, ``2w`` or ``1d12h``."""
    cleaned = text.strip().lower() if isinstance(text, str) else ""
    if not cleaned or _PART.sub("", cleaned):
        raise DurationError(f"cannot read {text!r} as a duration",
                            hint="use a number and a unit (s, m, h, d, w), as in 30d or 1d12h")
    return float(sum(int(n) * _UNITS[unit] for n, unit in _PART.findall(cleaned)))


@dataclass(frozen=True, slots=True)
class PruneReport:
    """What a prune removed and what the files weighed before and after."""

    removed: tuple[str, ...]
    bytes_before: int
    bytes_after: int

    def to_dict(self) -> dict[str, Any]:
        return {"removed": list(self.removed), "count": len(self.removed),
                "bytes_before": self.bytes_before, "bytes_after": self.bytes_after}


def footprint(*paths: Path) -> int:
    """Bytes on disk of SQLite files, their WAL and shared-memory files included."""
    total = 0
    for path in paths:
        for suffix in ("", "-wal", "-shm"):
            candidate = path.with_name(path.name + suffix)
            if candidate.exists():
                total += candidate.stat().st_size
    return total


def prune(store: SqliteSessionStore, checkpointer: Any, checkpoints: Path, before: float) -> PruneReport:
    """Remove finished sessions last changed before ``before`` and compact both files."""
    size = footprint(store.path, checkpoints)
    removed = store.prune(before)
    for thread_id in removed:
        checkpointer.delete_thread(thread_id)
    with checkpointer.lock:
        checkpointer.conn.execute("VACUUM")
        checkpointer.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.compact()
    return PruneReport(tuple(removed), size, footprint(store.path, checkpoints))
