"""A thread's newest checkpoints, read a page at a time instead of the whole history.

LangGraph's ``get_state_history`` lists every checkpoint of the thread before it yields the
first one, so a reader that wants the newest few (the audit scan after each node, a stream
rendering a node's writes, ``/state``) would pay for the thread's whole past on every call and
grow slower with every turn. These readers ask for ``PAGE`` checkpoints at a time, each page
starting ``before`` the last one seen, and stop at ``limit`` snapshots or at the checkpoint of
superstep ``since_step`` (or the first older one, where that step has none). (A page's
checkpoints are listed at once; the page a reader leaves early holds nothing open.)
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.pregel import Pregel

from grapharc.runtime.wrapped_saver import in_one_trip
from grapharc.session.named import Named, named, unnamed

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from grapharc.runtime.compiled import CompiledGraphARC

PAGE = 4
"""Checkpoints per read: the audit scan after a node usually needs two or three."""


def step_of(snapshot: Any) -> int:
    """The superstep a snapshot was saved at (-1 for the input checkpoint or none recorded)."""
    return int((snapshot.metadata or {}).get("step", -1))


@dataclass(frozen=True, slots=True)
class Window:
    """Which snapshots a reader wants: at most ``limit``, none older than ``since_step``, only those
    older than checkpoint ``before`` (an id; None: from the newest), only those whose metadata has
    the key-value pairs of ``metadata`` (the checkpointer's own ``filter``, as LangGraph's)."""

    since_step: int | None = None
    limit: int | None = None
    before: str | None = None
    metadata: Mapping[str, Any] | None = None


@dataclass(slots=True)
class _Paging:
    """Where a read of a window stands: the pages to ask for, and which snapshots to keep."""

    window: Window
    last: Any = None
    taken: int = 0
    on_page: int = PAGE  # snapshots seen on the page being read (a full first page is due)
    done: bool = False

    def next_page(self) -> dict[str, Any] | None:
        """The ``get_state_history`` arguments of the next page, None once the window is read."""
        if self.done or self.on_page < PAGE or self._full():
            return None
        self.on_page = 0
        wanted = self.window.metadata
        chosen = {"limit": PAGE, "filter": None if wanted is None else dict(wanted)}
        if self.last is not None:
            return {**chosen, "before": self.last.config}
        start = self.window.before
        return {**chosen, "before": None if start is None else {"configurable": {"checkpoint_id": start}}}

    def keep(self, snapshot: Any) -> bool:
        """Whether ``snapshot`` belongs to the window (False: stop reading)."""
        self.on_page += 1
        if self.window.since_step is not None and step_of(snapshot) < self.window.since_step:
            self.done = True
            return False
        self.taken, self.last = self.taken + 1, snapshot
        # stop before LangGraph prepares another snapshot: at the limit, or at the ``since_step``
        # checkpoint (a checkpoint's step is its parent's plus one, so along the thread every older
        # one is below the window; preparing the next only to drop it was a quarter of a scan's work)
        self.done = self._full() or (self.window.since_step is not None
                                     and step_of(snapshot) <= self.window.since_step)
        return True

    def _full(self) -> bool:
        return self.window.limit is not None and self.taken >= self.window.limit


def _read(pages: Callable[[dict[str, Any]], Iterable[Any]], window: Window) -> Iterator[Any]:
    """The items of ``window`` from ``pages`` (a page's arguments to its listing), newest first; a
    page is asked for only when the window may still want what it holds."""
    paging = _Paging(window)
    while (page := paging.next_page()) is not None:
        for item in pages(page):
            if not paging.keep(item):
                return
            yield item
            if paging.done:
                return


async def _aread(pages: Callable[[dict[str, Any]], AsyncIterable[Any]], window: Window) -> AsyncIterator[Any]:
    """Async ``_read``."""
    paging = _Paging(window)
    while (page := paging.next_page()) is not None:
        async for item in pages(page):
            if not paging.keep(item):
                return
            yield item
            if paging.done:
                return


def snapshots(compiled: CompiledGraphARC, thread: RunnableConfig, window: Window) -> Iterator[Any]:
    """The thread's snapshots in ``window``, newest first; a snapshot is prepared (LangGraph
    works out its tasks and values) only when the window may still want it."""
    return _read(lambda page: compiled.get_state_history(thread, **page), window)


def _top(thread: RunnableConfig) -> RunnableConfig:
    """``thread``'s config for the top graph's checkpoints (as ``get_state_history`` lists them)."""
    return {**thread, "configurable": {"checkpoint_ns": "", **thread.get("configurable", {})}}


def scan_window(compiled: CompiledGraphARC, thread: RunnableConfig, since_step: int, *,
                values: bool = False) -> list[Named]:
    """The checkpoints a node scan reads from superstep ``since_step`` on, newest first, their tasks
    named from the saved tuples (``grapharc.session.named``: half the work of LangGraph preparing a
    snapshot, tasks and values); the newest left unnamed while it has no write saved (as after each
    node of a chain: its tasks would only repeat its step as the scan's watermark). ``values``: each
    one named with the state's values too (a reader renders them), none left unnamed."""
    saver, top = compiled.checkpointer, _top(thread)
    saved = list(_read(lambda page: saver.list(top, **page), Window(since_step=since_step)))
    return _named_window(compiled.inner, saved, values)


async def ascan_window(compiled: CompiledGraphARC, thread: RunnableConfig, since_step: int, *,
                       values: bool = False) -> list[Named]:
    """Async ``scan_window``: ``scan_window`` itself in one trip where the checkpointer runs its calls
    on a thread of its own (``in_one_trip``: a trip a page fewer), else a trip per page."""
    if (trip := in_one_trip(compiled.checkpointer)) is not None:
        scanned: list[Named] = await trip(scan_window, compiled, thread, since_step, values=values)
        return scanned
    saver, top = compiled.checkpointer, _top(thread)
    window = Window(since_step=since_step)
    saved = [t async for t in _aread(lambda page: saver.alist(top, **page), window)]
    return _named_window(compiled.inner, saved, values)


def _named_window(pregel: Pregel[Any, Any, Any, Any], saved: list[CheckpointTuple],
                  values: bool) -> list[Named]:
    """The scan's view of the window's tuples (newest first): each named (with its ``values``), but,
    unless they are asked for, the newest left unnamed while none of its tasks has saved a write."""
    return [unnamed(t) if i == 0 and not values and not t.pending_writes else named(pregel, t, values=values)
            for i, t in enumerate(saved)]


def stored_values(compiled: CompiledGraphARC, thread: RunnableConfig) -> dict[str, Any]:
    """The state fields of the thread's newest checkpoint as stored, read without preparing its
    next tasks (which validates their input against the state model, and fails on a state that
    no longer fits it)."""
    saver = compiled.inner.checkpointer
    saved = saver.get_tuple(thread) if isinstance(saver, BaseCheckpointSaver) else None
    if saved is None:
        return {}
    channels = saved.checkpoint["channel_values"]
    return {name: channels[name] for name in compiled.contract.field_names if name in channels}
