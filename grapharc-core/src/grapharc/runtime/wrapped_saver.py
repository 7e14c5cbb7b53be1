"""A checkpointer that passes everything to the one it wraps, with a hook on every write.

The session layer fences writes of a thread whose lease was lost (``FencedSaver``); the
kernel stamps a thread's spend on every checkpoint (``grapharc.runtime.thread_spend``).
Both are this wrapper with one hook overridden, so neither re-implements the delegation.

Beyond the five base methods, LangGraph's savers may implement extended capabilities
(``prune``, ``delete_for_runs``, ``copy_thread``, sync and async; GraphARC's own savers also
``discard_writes``, which a rolled-back run needs), and a caller (LangGraph's
conformance suite, retention) tells whether one does by the saver's class overriding the
method (``offers``). So a wrapper's class is made per set of capabilities: each extended
method the inner saver offers is passed through, guarded as a write, and none other is, so
a wrapper neither hides a capability nor claims one its inner saver lacks.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterable, Iterator, Sequence
from typing import Any, Protocol, Self, cast

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from grapharc.runtime.serde import allowlisted
from grapharc.stores import offload


class DiscardsWrites(Protocol):
    """A saver offering GraphARC's ``discard_writes`` (``offers(saver, "discard_writes")`` tells)."""

    def discard_writes(self, config: Any, task_ids: Sequence[str]) -> None:
        """Delete the pending writes ``task_ids`` saved on the checkpoint ``config`` names, but their
        interrupts."""


def offers(saver: BaseCheckpointSaver[Any], method: str) -> bool:
    """True if ``saver`` implements ``method`` rather than inheriting LangGraph's unimplemented one
    (how LangGraph's conformance suite detects a capability)."""
    return _implements(type(saver), method)


def _implements(kind: type, method: str) -> bool:
    return getattr(kind, method, None) is not getattr(BaseCheckpointSaver, method, None)


OneTrip = Callable[..., Awaitable[Any]]
"""Runs a function of a saver's sync methods where its async ones run, in one trip (``aone_trip``)."""


def in_one_trip(saver: BaseCheckpointSaver[Any] | None) -> OneTrip | None:
    """The ``aone_trip`` of the saver under ``saver``'s wrappers (core's async SQLite saver has one), or
    None. The function it is given calls ``saver``'s own sync methods, so its wrappers' guards and
    stamps apply as on any write."""
    trip: OneTrip | None = getattr(innermost(saver), "aone_trip", None)
    return trip


def innermost(saver: BaseCheckpointSaver[Any] | None) -> BaseCheckpointSaver[Any] | None:
    """The saver under ``saver``'s wrappers (``saver`` itself when it wraps none)."""
    inner = saver
    while isinstance(inner, WrappedSaver):
        inner = inner.inner
    return inner


class WrappedSaver(BaseCheckpointSaver[Any]):
    """Delegates to ``inner``; ``guard`` (``guard_threads``, ``guard_runs``) runs before every write
    and ``stamp`` adds to the metadata of every checkpoint. Subclasses override what they need and
    ``rewrap``. An instance's class offers the extended capabilities ``inner`` offers (see the module)."""

    guard_blocks = False
    """True when the guards do I/O, so the async writes run them in a thread."""

    def __init__(self, inner: BaseCheckpointSaver[Any]) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner
        declared = type(self).__dict__.get("_declared_as", type(self))
        self.__class__ = _offering(declared, frozenset(m for m in _EXTENDED if offers(inner, m)))

    def rewrap(self, inner: BaseCheckpointSaver[Any]) -> Self:
        """This wrapper around another inner checkpointer."""
        raise NotImplementedError

    def guard(self, config: Any) -> None:
        """Refuse a write (by raising) before it reaches the inner checkpointer."""

    def guard_threads(self, thread_ids: Iterable[str]) -> None:
        """Refuse a write that changes whole threads (deleting, pruning, copying to them)."""
        for thread_id in thread_ids:
            self.guard({"configurable": {"thread_id": thread_id}})

    def guard_runs(self, run_ids: Sequence[str]) -> None:
        """Refuse deleting the checkpoints of ``run_ids``; a subclass whose ``guard`` refuses
        writes decides here which threads that deletion changes."""

    def stamp(self, metadata: Any) -> Any:
        """The metadata a new checkpoint is saved with."""
        return metadata

    async def _aguarded(self, guard: Callable[..., None], *args: Any) -> None:
        if self.guard_blocks:
            await offload.to_thread(guard, *args)
        else:
            guard(*args)

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
        self.guard_threads([thread_id])
        self.inner.delete_thread(thread_id)

    def get_next_version(self, current: Any, channel: Any) -> Any:
        return self.inner.get_next_version(current, channel)

    async def aget_tuple(self, config: Any) -> CheckpointTuple | None:
        return await self.inner.aget_tuple(config)

    async def alist(self, config: Any, **kwargs: Any) -> AsyncIterator[CheckpointTuple]:
        async for item in self.inner.alist(config, **kwargs):
            yield item

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        await self._aguarded(self.guard, config)
        return await self.inner.aput(config, checkpoint, self.stamp(metadata), new_versions)

    async def aput_writes(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        await self._aguarded(self.guard, config)
        await self.inner.aput_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await self._aguarded(self.guard_threads, [thread_id])
        await self.inner.adelete_thread(thread_id)


# -- the extended capabilities, each passed through only where the inner saver offers it ----------


def _prune(self: WrappedSaver, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
    self.guard_threads(thread_ids)
    self.inner.prune(thread_ids, strategy=strategy)


async def _aprune(self: WrappedSaver, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
    await self._aguarded(self.guard_threads, thread_ids)
    await self.inner.aprune(thread_ids, strategy=strategy)


def _delete_for_runs(self: WrappedSaver, run_ids: Sequence[str]) -> None:
    self.guard_runs(run_ids)
    self.inner.delete_for_runs(run_ids)


async def _adelete_for_runs(self: WrappedSaver, run_ids: Sequence[str]) -> None:
    await self._aguarded(self.guard_runs, run_ids)
    await self.inner.adelete_for_runs(run_ids)


def _copy_thread(self: WrappedSaver, source_thread_id: str, target_thread_id: str) -> None:
    self.guard_threads([target_thread_id])
    self.inner.copy_thread(source_thread_id, target_thread_id)


async def _acopy_thread(self: WrappedSaver, source_thread_id: str, target_thread_id: str) -> None:
    await self._aguarded(self.guard_threads, [target_thread_id])
    await self.inner.acopy_thread(source_thread_id, target_thread_id)


def _discard_writes(self: WrappedSaver, config: Any, task_ids: Sequence[str]) -> None:
    self.guard(config)
    cast(DiscardsWrites, self.inner).discard_writes(config, task_ids)


_EXTENDED: dict[str, Callable[..., Any]] = {
    "prune": _prune, "aprune": _aprune, "delete_for_runs": _delete_for_runs,
    "adelete_for_runs": _adelete_for_runs, "copy_thread": _copy_thread, "acopy_thread": _acopy_thread,
    "discard_writes": _discard_writes,
}
"""LangGraph's extended capabilities by method name (sync and async), and GraphARC's own
``discard_writes`` (sync only: a rollback's), and how a wrapper passes each on."""


@functools.cache
def _offering(declared: type[WrappedSaver], methods: frozenset[str]) -> type[WrappedSaver]:
    """The class ``declared`` (a subclass of it, one per set) that also passes ``methods`` through;
    a method ``declared`` implements itself stays its own."""
    added = {method: _EXTENDED[method] for method in sorted(methods) if not _implements(declared, method)}
    if not added:
        return declared
    namespace = {**added, "_declared_as": declared, "__module__": declared.__module__,
                 "__qualname__": declared.__qualname__}
    return cast(type[WrappedSaver], type(declared.__name__, (declared,), namespace))
