"""A thread's newest checkpoints, read a page at a time instead of the whole history.

LangGraph's ``get_state_history`` lists every checkpoint of the thread before it yields the
first one, so a reader that wants the newest few (the audit scan after each node, a stream
rendering a node's writes, ``/state``) would pay for the thread's whole past on every call and
grow slower with every turn. These readers ask for ``PAGE`` checkpoints at a time, each page
starting ``before`` the last one seen, and stop at ``limit`` snapshots or at the first
checkpoint older than superstep ``since_step``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig

from grapharc.runtime.compiled import CompiledGraphARC

PAGE = 4
"""Checkpoints per read: the audit scan after a node usually needs two or three."""


def step_of(snapshot: Any) -> int:
    """The superstep a snapshot was saved at (-1 for the input checkpoint or none recorded)."""
    return int((snapshot.metadata or {}).get("step", -1))


@dataclass(frozen=True, slots=True)
class Window:
    """Which snapshots a reader wants: at most ``limit``, none older than ``since_step``."""

    since_step: int | None = None
    limit: int | None = None

    def take(self, page: Sequence[Any], taken: int) -> tuple[list[Any], bool]:
        """The snapshots of ``page`` to yield after ``taken`` so far, and whether to read on."""
        kept: list[Any] = []
        for snapshot in page:
            if (self.since_step is not None and step_of(snapshot) < self.since_step) or \
                    (self.limit is not None and taken + len(kept) >= self.limit):
                return kept, False
            kept.append(snapshot)
        return kept, len(page) == PAGE

    def page_args(self, last: Any) -> dict[str, Any]:
        """The ``get_state_history`` arguments of the page after ``last`` (None: the first)."""
        return {"limit": PAGE, "before": None if last is None else last.config}


def snapshots(compiled: CompiledGraphARC, thread: RunnableConfig, window: Window) -> Iterator[Any]:
    """The thread's snapshots in ``window``, newest first."""
    last, taken, more = None, 0, True
    while more:
        page = list(compiled.get_state_history(thread, **window.page_args(last)))
        kept, more = window.take(page, taken)
        yield from kept
        taken += len(kept)
        last = page[-1] if page else None


async def asnapshots(compiled: CompiledGraphARC, thread: RunnableConfig,
                     window: Window) -> AsyncIterator[Any]:
    """Async ``snapshots``."""
    last, taken, more = None, 0, True
    while more:
        page = [s async for s in compiled.aget_state_history(thread, **window.page_args(last))]
        kept, more = window.take(page, taken)
        for snapshot in kept:
            yield snapshot
        taken += len(kept)
        last = page[-1] if page else None
