"""The async face of a sync checkpointer: each async call is one trip to a thread of its own.

LangGraph's ``AsyncSqliteSaver`` goes through aiosqlite, which hands every statement, fetch
and cursor close to its thread separately: a checkpoint write, a read of the latest
checkpoint or a page of history costs the event loop five to ten round trips. This wrapper
runs the sync saver's whole call in one trip instead (a history page is listed in full
there), which halved the CPU a step's checkpoint calls cost in ``benchmarks/`` measurements.
Its thread is the only one using the sync saver's connection and runs calls in the order
they were made, as aiosqlite's did: a read asked after a write sees it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from grapharc.runtime.wrapped_saver import WrappedSaver

_T = TypeVar("_T")


class ThreadedSaver(WrappedSaver):
    """``inner``'s sync methods, with async ones that run them on ``thread`` (one worker)."""

    def __init__(self, inner: BaseCheckpointSaver[Any], thread: ThreadPoolExecutor) -> None:
        super().__init__(inner)
        self.thread = thread

    def rewrap(self, inner: BaseCheckpointSaver[Any]) -> ThreadedSaver:
        return ThreadedSaver(inner, self.thread)

    async def _call(self, call: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """``call(*args, **kwargs)`` on the saver's thread, after every call asked before it."""
        return await asyncio.get_running_loop().run_in_executor(self.thread, lambda: call(*args, **kwargs))

    async def aget_tuple(self, config: Any) -> CheckpointTuple | None:
        return await self._call(self.inner.get_tuple, config)

    async def alist(self, config: Any, **kwargs: Any) -> AsyncIterator[CheckpointTuple]:
        for item in await self._call(lambda: list(self.inner.list(config, **kwargs))):
            yield item

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return await self._call(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        await self._call(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await self._call(self.inner.delete_thread, thread_id)
