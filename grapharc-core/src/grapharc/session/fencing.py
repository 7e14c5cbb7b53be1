"""Fenced checkpoints: a runner that lost its lease cannot write its thread's state any more.

A runner frozen past its lease (a stopped process, a paused VM) may wake after another
runner has taken the thread over. Its heartbeat notices at the next renewal, but a
checkpoint could be written before that. So every checkpoint write of a thread this
process holds a lease on is refused with ``LeaseLostError`` unless the lease is still
this runner's, and the stale runner's turn ends there. A checkpointer that keeps its
checkpoints beside the session rows (``FencesInTransaction``: grapharc-postgres) checks
the lease in the write's own transaction, so no takeover slips in between; for any
other, ``FencedSaver`` asks the session store just before the write, which leaves a
window of one statement (a takeover needs a stall of a whole lease).

The wrapper delegates everything else to the checkpointer it wraps; writes for
threads without a lease here (an operator's ``update_state``) pass unfenced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from langgraph.checkpoint.base import BaseCheckpointSaver

from grapharc.runtime.wrapped_saver import WrappedSaver
from grapharc.session.errors import LeaseLostError
from grapharc.session.lease import Lease


class Leases:
    """The leases this process holds, by thread, and the check that one is still current."""

    def __init__(self, still_held: Callable[[Lease], bool]) -> None:
        self.held: dict[str, Lease] = {}
        self.still_held = still_held

    def lease_for(self, config: Any) -> Lease | None:
        """The lease this process holds on the thread ``config`` writes to, if any."""
        return self.held.get(str((config.get("configurable") or {}).get("thread_id", "")))

    def check(self, config: Any) -> None:
        """Refuse a write to a thread whose lease this process lost."""
        lease = self.lease_for(config)
        if lease is not None and not self.still_held(lease):
            raise lost(lease)


def lost(lease: Lease) -> LeaseLostError:
    """The refusal of a checkpoint write under ``lease``, which is no longer current."""
    return LeaseLostError(
        f"runner {lease.runner} lost its lease on thread {lease.thread_id}; its checkpoint write "
        "was refused", hint="another runner has taken the thread over and carries on")


@runtime_checkable
class FencesInTransaction(Protocol):
    """A checkpointer that can check a write's lease inside the transaction that writes."""

    def fenced_by(self, leases: Leases) -> BaseCheckpointSaver[Any]:
        """This checkpointer refusing, in each write's own transaction, a write to a thread
        ``leases`` holds whose lease is no longer current (``lost``)."""
        ...


def fence(inner: BaseCheckpointSaver[Any], leases: Leases) -> BaseCheckpointSaver[Any]:
    """``inner`` with the writes of threads ``leases`` holds fenced: in the write's transaction
    where ``inner`` can, else by ``FencedSaver``'s check just before it."""
    if isinstance(inner, FencesInTransaction):
        return inner.fenced_by(leases)
    return FencedSaver(inner, leases)


class FencedSaver(WrappedSaver):
    """A checkpointer whose writes for leased threads are fenced by ``Leases``."""

    guard_blocks = True  # the lease check reads the session store

    def __init__(self, inner: BaseCheckpointSaver[Any], leases: Leases) -> None:
        super().__init__(inner)
        self.leases = leases

    def rewrap(self, inner: BaseCheckpointSaver[Any]) -> FencedSaver:
        return FencedSaver(inner, self.leases)

    def guard(self, config: Any) -> None:
        self.leases.check(config)
