"""A checkpointer that passes everything to the one it wraps, with a hook on every write.

The session layer fences writes of a thread whose lease was lost (``FencedSaver``); the
kernel stamps a thread's spend on every checkpoint (``grapharc.runtime.thread_spend``).
Both are this wrapper with one hook overridden, so neither re-implements the delegation.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Iterator, Sequence
from typing import Any, Self

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from grapharc.runtime.serde import allowlisted
from grapharc.stores import offload


class WrappedSaver(BaseCheckpointSaver[Any]):
    """Delegates to ``inner``; ``guard`` runs before every write and ``stamp`` adds to the
    metadata of every checkpoint. Subclasses override what they need and ``rewrap``."""

    guard_blocks = False
    """True when ``guard`` does I/O, so the async writes run it in a thread."""

    def __init__(self, inner: BaseCheckpointSaver[Any]) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner

    def rewrap(self, inner: BaseCheckpointSaver[Any]) -> Self:
        """This wrapper around another inner checkpointer."""
        raise NotImplementedError

    def guard(self, config: Any) -> None:
        """Refuse a write (by raising) before it reaches the inner checkpointer."""

    def stamp(self, metadata: Any) -> Any:
        """The metadata a new checkpoint is saved with."""
        return metadata

    async def _aguard(self, config: Any) -> None:
        if self.guard_blocks:
            await offload.to_thread(self.guard, config)
        else:
            self.guard(config)

    @property
    def config_specs(self) -> list[Any]:
        return self.inner.config_specs

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> Self:
        """The same wrapper over the inner checkpointer allowlisted: the inner one (de)serializes."""
        return self.rewrap(allowlisted(self.inner, extra_allowlist))

    def get_tuple(self, config: Any) -> CheckpointTuple | None:
        return self.inner.get_tuple(config)

    def list(self, config: Any, **kwargs: Any) -> Iterator[CheckpointTuple]:
        return self.inner.list(config, **kwargs)

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        self.guard(config)
        return self.inner.put(config, checkpoint, self.stamp(metadata), new_versions)

    def put_writes(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        self.guard(config)
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
        await self._aguard(config)
        return await self.inner.aput(config, checkpoint, self.stamp(metadata), new_versions)

    async def aput_writes(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        await self._aguard(config)
        await self.inner.aput_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await self.inner.adelete_thread(thread_id)
