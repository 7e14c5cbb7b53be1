"""Retention: finished sessions older than a duration go, with their checkpoints and holds.

A paused or running session is never removed, however old: someone may still answer
it, or its runner may still be alive. The session store removes its own records; the
thread's checkpoints and writes go through what LangGraph's saver offers (its batch
``prune(..., strategy="delete")`` where the saver implements that extended capability,
else ``delete_thread`` per thread). Giving the space back (compacting a file) is each
store's business.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from grapharc.runtime.wrapped_saver import offers
from grapharc.session.contracts import CheckpointerProvider, SessionStore
from grapharc.session.errors import DurationError

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
    """What a prune removed (threads, their checkpoints) and what the stores weighed before and after."""

    removed: tuple[str, ...]
    bytes_before: int
    bytes_after: int
    checkpoints: int = 0

    @property
    def bytes_freed(self) -> int:
        """Bytes given back; never negative (a store may grow a little just by being opened)."""
        return max(0, self.bytes_before - self.bytes_after)

    def to_dict(self) -> dict[str, Any]:
        return {"removed": list(self.removed), "count": len(self.removed),
                "checkpoints": self.checkpoints, "bytes_freed": self.bytes_freed,
                "bytes_on_disk": self.bytes_after}


def count_checkpoints(saver: BaseCheckpointSaver[Any], thread_ids: Sequence[str]) -> int:
    """How many checkpoints ``thread_ids`` hold, in every namespace."""
    return sum(1 for thread_id in thread_ids for _ in saver.list({"configurable": {"thread_id": thread_id}}))


def delete_threads(saver: BaseCheckpointSaver[Any], thread_ids: Sequence[str]) -> None:
    """Delete every checkpoint and write of ``thread_ids``, in one call where the saver can."""
    if not thread_ids:
        return
    if offers(saver, "prune"):
        saver.prune(thread_ids, strategy="delete")
        return
    for thread_id in thread_ids:
        saver.delete_thread(thread_id)


def weight(store: SessionStore, checkpoints: CheckpointerProvider) -> int:
    """Bytes both stores occupy, a place they share counted once."""
    return sum({**store.footprint(), **checkpoints.footprint()}.values())


def prune(store: SessionStore, checkpoints: CheckpointerProvider, before: float) -> PruneReport:
    """Remove finished sessions last changed before ``before`` with their checkpoints; compact."""
    size = weight(store, checkpoints)
    removed = store.prune(before)
    if not removed:
        return PruneReport((), size, size)
    saver = checkpoints.saver()
    held = count_checkpoints(saver, removed)
    delete_threads(saver, removed)
    checkpoints.compact()
    return PruneReport(tuple(removed), size, weight(store, checkpoints), held)
