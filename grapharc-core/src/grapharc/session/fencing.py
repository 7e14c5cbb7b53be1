"""Fenced checkpoints: a runner that lost its lease cannot write its thread's state any more.

A runner frozen past its lease (a stopped process, a paused VM) may wake after another
runner has taken the thread over. Its heartbeat notices at the next renewal, but a
checkpoint could be written before that. So every checkpoint write of a thread this
process holds a lease on first checks, in the session store, that the lease is still
this runner's; if not, the write is refused with ``LeaseLostError`` and the stale
runner's turn ends there. The check and the write go to two stores, so a window of one
statement remains; a takeover needs a stall of a whole lease.

The wrapper delegates everything else to the checkpointer it wraps; writes for
threads without a lease here (an operator's ``update_state``) pass unfenced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from grapharc.runtime.wrapped_saver import WrappedSaver
from grapharc.session.errors import LeaseLostError
from grapharc.session.lease import Lease


class Leases:
    """The leases this process holds, by thread, and the check that one is still current."""

    def __init__(self, still_held: Callable[[Lease], bool]) -> None:
        self.held: dict[str, Lease] = {}
        self.still_held = still_held

    def check(self, config: Any) -> None:
        """Refuse a write to a thread whose lease this process lost."""
        thread_id = str((config.get("configurable") or {}).get("thread_id", ""))
        lease = self.held.get(thread_id)
        if lease is not None and not self.still_held(lease):
            raise LeaseLostError(
                f"runner {lease.runner} lost its lease on thread {thread_id}; its checkpoint write "
                "was refused", hint="another runner has taken the thread over and carries on")


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
