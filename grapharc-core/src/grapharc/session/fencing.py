"""Fenced checkpoints: a runner that lost its lease cannot write its thread's state any more.

A runner frozen past its lease (a stopped process, a paused VM) may wake after another
runner has taken the thread over. Its heartbeat notices at the next renewal, but a
checkpoint could be written before that. So every checkpoint write of a thread this
process holds a lease on is refused with ``LeaseLostError`` unless the lease is still
this runner's, and the stale runner's turn ends there. A checkpointer that fences its own
writes (``FencesItsWrites``) does it best where it can: grapharc-postgres, whose checkpoints
sit beside the session rows, checks the lease in the write's own transaction, so no takeover
slips in between; core's SQLite savers ask the session store just before the write (the async
one on its connection's thread, in the write's own trip). For any other, ``FencedSaver`` asks
the session store just before the write (an async write in a thread trip of its own). Outside
a transaction this leaves a window of one statement (a takeover needs a stall of a whole lease).

``FencedSaver`` and core's SQLite savers fence every write, not only a checkpoint's: deleting a
thread, pruning threads or copying onto one checks each thread it changes (all of them before
any is changed), and deleting runs' checkpoints checks the threads held here that those runs
wrote to. (grapharc-postgres's savers fence their checkpoint writes so far, not a prune.) The
wrapper delegates everything else to the checkpointer it wraps, the extended capabilities only
where that one has them; writes for threads without a lease here (an operator's
``update_state``) pass unfenced.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from grapharc.runtime.wrapped_saver import WrappedSaver
from grapharc.session.errors import LeaseLostError
from grapharc.session.lease import Lease


class Leases:
    """The leases this process holds, by thread, and the check that one is still current;
    ``reads_on_loop``: the check may run on an event loop's thread (it never waits for a writer:
    ``grapharc.stores.offload.reads_on_loop``)."""

    def __init__(self, still_held: Callable[[Lease], bool], *, reads_on_loop: bool = False) -> None:
        self.held: dict[str, Lease] = {}
        self.still_held = still_held
        self.reads_on_loop = reads_on_loop

    def lease_for(self, config: Any) -> Lease | None:
        """The lease this process holds on the thread ``config`` writes to, if any."""
        return self.held.get(str((config.get("configurable") or {}).get("thread_id", "")))

    def check(self, config: Any) -> None:
        """Refuse a write to a thread whose lease this process lost."""
        lease = self.lease_for(config)
        if lease is not None and not self.still_held(lease):
            raise lost(lease)

    def check_threads(self, thread_ids: Iterable[str]) -> None:
        """Refuse a write to several threads (a prune, a copy) if this process lost the lease of one."""
        for thread_id in thread_ids:
            self.check(_every_namespace_of(thread_id))

    def check_runs(self, saver: BaseCheckpointSaver[Any], run_ids: Sequence[str]) -> None:
        """Refuse deleting the checkpoints of ``run_ids`` if one is on a thread whose lease this
        process lost; ``saver`` is read only for the threads this process holds (the others are
        not its to fence)."""
        self.check_threads(thread_id for thread_id in list(self.held)
                           if any(_has_run(saver, thread_id, run_id) for run_id in run_ids))


def _has_run(saver: BaseCheckpointSaver[Any], thread_id: str, run_id: str) -> bool:
    """Whether ``run_id`` wrote a checkpoint of ``thread_id`` (the listing is read to its end,
    which lets a saver that holds its connection while listing go of it)."""
    return bool(list(saver.list(_every_namespace_of(thread_id), filter={"run_id": run_id}, limit=1)))


def _every_namespace_of(thread_id: str) -> RunnableConfig:
    """The config addressing a thread as a whole (no namespace named)."""
    return {"configurable": {"thread_id": thread_id}}


def lost(lease: Lease) -> LeaseLostError:
    """The refusal of a checkpoint write under ``lease``, which is no longer current."""
    return LeaseLostError(
        f"runner {lease.runner} lost its lease on thread {lease.thread_id}; its checkpoint write "
        "was refused", hint="another runner has taken the thread over and carries on")


@runtime_checkable
class FencesItsWrites(Protocol):
    """A checkpointer that checks a write's lease itself: in the transaction that writes, or at
    least in the same call to its store, with no trip of its own."""

    def fenced_by(self, leases: Leases) -> BaseCheckpointSaver[Any]:
        """This checkpointer refusing, with each write, a write to a thread ``leases`` holds whose
        lease is no longer current (``lost``)."""
        ...


def fence(inner: BaseCheckpointSaver[Any], leases: Leases) -> BaseCheckpointSaver[Any]:
    """``inner`` with the writes of threads ``leases`` holds fenced: by ``inner`` itself where it
    can, else by ``FencedSaver``'s check just before each write."""
    if isinstance(inner, FencesItsWrites):
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

    def guard_runs(self, run_ids: Sequence[str]) -> None:
        self.leases.check_runs(self.inner, run_ids)
