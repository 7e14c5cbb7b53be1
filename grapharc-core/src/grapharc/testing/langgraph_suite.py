"""LangGraph's checkpointer conformance suite, run on any saver: the sync API through worker threads,
a saver wrapped in a ``FencedSaver``, and the capabilities each API offers (for the conformance kit
and for tests of savers that are not a ``CheckpointerProvider``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import Capability, DetectedCapabilities

from grapharc.runtime.wrapped_saver import offers
from grapharc.session.fencing import FencedSaver, Leases

OpenSaver = Callable[[], AbstractAsyncContextManager[BaseCheckpointSaver[Any]]]

_SYNC_METHODS = {
    Capability.PUT: "put", Capability.PUT_WRITES: "put_writes", Capability.GET_TUPLE: "get_tuple",
    Capability.LIST: "list", Capability.DELETE_THREAD: "delete_thread",
    Capability.DELETE_FOR_RUNS: "delete_for_runs", Capability.COPY_THREAD: "copy_thread",
    Capability.PRUNE: "prune",
}


class ThreadedSaver(BaseCheckpointSaver[Any]):
    """A sync saver behind the async API, each call in a worker thread, for LangGraph's async suite."""

    def __init__(self, inner: BaseCheckpointSaver[Any]) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner

    async def aget_tuple(self, config: Any) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.inner.get_tuple, config)

    async def alist(self, config: Any, **kwargs: Any) -> AsyncIterator[CheckpointTuple]:
        for item in await asyncio.to_thread(lambda: list(self.inner.list(config, **kwargs))):
            yield item

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return await asyncio.to_thread(self.inner.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        await asyncio.to_thread(self.inner.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.inner.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.inner.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.inner.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(lambda: self.inner.prune(thread_ids, strategy=strategy))

    def get_next_version(self, current: Any, channel: Any) -> Any:
        return self.inner.get_next_version(current, channel)


async def check_langgraph_suite(name: str, open_saver: OpenSaver,
                                capabilities: set[str] | None = None) -> None:
    """Run LangGraph's checkpointer conformance suite; fail naming every failed test."""

    async def factory() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        async with open_saver() as saver:
            yield saver

    report = await validate(checkpointer_test(name=name)(factory), capabilities=capabilities)
    failures = {cap: result.failures for cap, result in report.results.items()
                if result.detected and result.passed is not True}
    assert report.passed_all_base() and not failures, f"{name}: {failures}"


def run_langgraph_suite(name: str, open_saver: OpenSaver, capabilities: set[str] | None = None) -> None:
    """``check_langgraph_suite`` on an event loop of its own."""
    asyncio.run(check_langgraph_suite(name, open_saver, capabilities))


def async_capabilities(saver: BaseCheckpointSaver[Any]) -> frozenset[Capability]:
    """The suite's capabilities ``saver`` implements, as the suite detects them (its async API)."""
    return DetectedCapabilities.from_instance(saver).detected


def same_capabilities(kind: str, session: Collection[str], provider: Collection[str]) -> None:
    """Fail unless the session graph's ``kind`` (sync, async) saver offers what its provider's does."""
    if set(session) != set(provider):
        offered, provided = (", ".join(sorted(Capability(c).value for c in of)) for of in (session, provider))
        raise AssertionError(f"the session graph's {kind} saver offers {offered}; its provider's {provided}")


def held(saver: BaseCheckpointSaver[Any]) -> OpenSaver:
    """An already open ``saver`` offered to the suite as it is."""

    @asynccontextmanager
    async def opened() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        yield saver

    return opened


def fenced(open_saver: OpenSaver, leases: Leases) -> OpenSaver:
    """``open_saver`` with each saver it opens wrapped in a ``FencedSaver`` over ``leases``."""

    @asynccontextmanager
    async def opened() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        async with open_saver() as saver:
            yield FencedSaver(saver, leases)

    return opened


def sync_capabilities(saver: BaseCheckpointSaver[Any]) -> set[str]:
    """The suite's capabilities ``saver`` implements in its sync API."""
    return {cap.value for cap, method in _SYNC_METHODS.items() if offers(saver, method)}


def threaded(saver: BaseCheckpointSaver[Any]) -> OpenSaver:
    """The sync ``saver`` offered to the async suite as a ``ThreadedSaver``."""

    @asynccontextmanager
    async def opened() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        yield ThreadedSaver(saver)

    return opened
