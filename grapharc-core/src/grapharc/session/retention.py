"""Retention: finished sessions older than a duration go, with their checkpoints and holds.

A paused or running session is never removed, however old: someone may still answer
it, or its runner may still be alive. The session store removes its own records; the
thread's checkpoints and writes go through what LangGraph's saver offers (its batch
``prune(..., strategy="delete")`` where the saver implements that extended capability,
else ``delete_thread`` per thread). Giving the space back (compacting a file) is each
store's business.

Threads named one by one (``threads.prune``) may instead keep their latest checkpoints only
(``keep_latest``): that needs the saver's ``prune``, which has no fallback, so a checkpointer
without it is refused by name. Either way a thread being run or waiting on an approval is
refused before any thread is pruned.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from grapharc.runtime.wrapped_saver import offers
from grapharc.session.contracts import CheckpointerProvider, SessionStore
from grapharc.session.errors import (
    CheckpointerCapabilityError,
    DurationError,
    PruneRefusedError,
    SessionBusyError,
    ThreadPausedError,
)
from grapharc.session.records import Session

THREAD_PRUNE_STRATEGIES = ("delete", "keep_latest")
"""What ``threads.prune`` may do to each thread named: remove it, or keep its latest checkpoints only."""

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


def keep_latest(saver: BaseCheckpointSaver[Any], thread_ids: Sequence[str]) -> dict[str, int]:
    """Drop all but the latest checkpoints of ``thread_ids`` through the saver's ``prune``; how many
    each thread lost. Refused, nothing dropped, where the saver lacks ``prune`` or a thread uses a
    ``DeltaChannel`` (the saver checks every thread before pruning any)."""
    if not offers(saver, "prune"):
        raise CheckpointerCapabilityError(
            f"the checkpointer ({type(saver).__name__}) does not implement LangGraph's prune, so it "
            "cannot keep only each thread's latest checkpoints; nothing was pruned",
            hint="prune with strategy 'delete', or use a checkpointer that implements prune "
                 "(GraphARC's SQLite and PostgreSQL ones do)")
    before = {thread_id: count_checkpoints(saver, [thread_id]) for thread_id in thread_ids}
    try:
        saver.prune(thread_ids, strategy="keep_latest")
    except NotImplementedError as exc:
        raise PruneRefusedError(f"{exc}; nothing was pruned",
                                hint="prune these threads with strategy 'delete', or leave them") from None
    return {thread_id: held - count_checkpoints(saver, [thread_id]) for thread_id, held in before.items()}


def refuse_unprunable(sessions: Sequence[Session], now: float) -> None:
    """Refuse a prune, before any thread is pruned, if one of ``sessions`` is being run (a live
    lease) or waits on an approval (someone may still answer it)."""
    for session in sessions:
        if session.lease_live(now):
            raise SessionBusyError(f"thread {session.thread_id} is being run by runner {session.runner}, "
                                   "so it cannot be pruned; nothing was pruned",
                                   hint="prune it once its run has ended")
        if session.holds:
            waiting = ", ".join(hold.approval_id for hold in session.holds)
            raise ThreadPausedError(f"thread {session.thread_id} waits on approval {waiting}, so it cannot "
                                    "be pruned; nothing was pruned",
                                    hint="answer its open approval first, then prune it")


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
