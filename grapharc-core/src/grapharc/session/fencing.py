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

import asyncio
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from grapharc.runtime.serde import allowlisted
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


class FencedSaver(BaseCheckpointSaver):
    """A checkpointer whose writes for leased threads are fenced by ``Leases``."""

    def __init__(self, inner: BaseCheckpointSaver, leases: Leases) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner
        self.leases = leases

    @property
    def config_specs(self) -> list[Any]:
        return self.inner.config_specs

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> FencedSaver:
        """The same fence over the inner checkpointer allowlisted, as the inner one (de)serializes."""
        return FencedSaver(allowlisted(self.inner, extra_allowlist), self.leases)

    def get_tuple(self, config: Any) -> CheckpointTuple | None:
        return self.inner.get_tuple(config)

    def list(self, config: Any, **kwargs: Any) -> Iterator[CheckpointTuple]:
        return self.inner.list(config, **kwargs)

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        self.leases.check(config)
        return self.inner.put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        self.leases.check(config)
        self.inner.put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        self.inner.delete_thread(thread_id)

    def get_next_version(self, current: Any, channel: Any) -> Any:
        return self.inner.get_next_version(current, channel)

    async def aget_tuple(self, config: Any) -> CheckpointTuple | None:
        return await self.inner.aget_tuple(config)

    async def alist(self, config: Any, **kwargs: Any) -> AsyncIterator[CheckpointTuple]:
        async for item in self.inner.alist(config, **kwargs):
            yield item

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        await asyncio.to_thread(self.leases.check, config)
        return await self.inner.aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        await asyncio.to_thread(self.leases.check, config)
        await self.inner.aput_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await self.inner.adelete_thread(thread_id)
