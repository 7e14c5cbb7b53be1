"""Leases for testing a ``FencedSaver``: one that holds every thread (each write goes through the
fence), one lost to another runner, and the writes that must change nothing of a lost thread."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from grapharc.runtime.wrapped_saver import offers
from grapharc.session.fencing import Leases
from grapharc.session.lease import Lease


class _EveryThreadLeased(dict[str, Lease]):
    """Every thread counts as leased, so each write of LangGraph's suite goes through the fence."""

    def get(self, thread_id: str, default: Any = None) -> Lease:
        return Lease(thread_id, "kit-runner", "kit-token", 60.0)


def engaged_fence() -> tuple[Leases, list[Lease]]:
    """Leases that hold every thread, and the list of leases the fence checked."""
    checked: list[Lease] = []

    def still_held(lease: Lease) -> bool:
        checked.append(lease)
        return True

    leases = Leases(still_held)
    leases.held = _EveryThreadLeased()
    return leases, checked


def lost_fence(thread_id: str) -> Leases:
    """Leases under which this process held ``thread_id`` and has since lost it."""
    leases = Leases(lambda lease: False)
    leases.held[thread_id] = Lease(thread_id, "stale-runner", "old-token", 60.0)
    return leases


_LOST_THREAD_WRITES: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "delete_thread": (("lost",), {}),
    "prune": ((["kept", "lost"],), {"strategy": "delete"}),
    "copy_thread": (("kept", "lost"), {}),
    "delete_for_runs": ((["run-kept", "run-lost"],), {}),
    "discard_writes": (({"configurable": {"thread_id": "lost", "checkpoint_ns": "", "checkpoint_id": "any"}},
                        ["task-1"]), {}),
}


def writes_to_a_lost_thread(saver: BaseCheckpointSaver[Any],
                            prefix: str = "") -> dict[str, Callable[[], Any]]:
    """Each write but a put that changes the thread ``lost`` (of ``lost_fence("lost")``; ``kept`` is
    one with no lease here), by method: the sync ones, or with ``prefix="a"`` the async ones (each
    call then returns a coroutine), among those ``saver`` offers."""
    return {prefix + name: functools.partial(getattr(saver, prefix + name), *args, **kwargs)
            for name, (args, kwargs) in _LOST_THREAD_WRITES.items() if offers(saver, prefix + name)}
