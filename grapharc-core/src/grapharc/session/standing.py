"""Where a thread stands, as settling it reads it: its newest checkpoint's tasks named, no snapshot prepared.

Settling after each pass (``grapharc.session.settle``) needs the newest checkpoint's tasks with
their interrupts, errors and results, its config and metadata. LangGraph's ``get_state`` also
prepares every task for execution, applies the saved writes and reads the state's values: the
tasks named from the saved tuple (``grapharc.session.named``, the same tasks by construction) cost
about half. The values (a gate's hold, a completed thread's outcome) are read with ``get_state``
only when asked for, which a settled chain never does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from grapharc.runtime.compiled import CompiledGraphARC
from grapharc.session.named import named


class Standing:
    """A thread's newest checkpoint with the fields of a ``StateSnapshot`` that settling reads:
    ``config``, ``parent_config``, ``metadata``, ``created_at``, ``tasks``, ``interrupts``, and
    ``values`` read on first use."""

    def __init__(self, config: Any, parent_config: Any, metadata: Any, created_at: str | None,
                 tasks: tuple[Any, ...], read_values: Callable[[], dict[str, Any]]) -> None:
        self.config = config
        self.parent_config = parent_config
        self.metadata = metadata
        self.created_at = created_at
        self.tasks = tasks
        self._read_values = read_values

    @property
    def interrupts(self) -> tuple[Any, ...]:
        """Every task's interrupts, in task order (as a snapshot's)."""
        return tuple(interrupt for task in self.tasks for interrupt in task.interrupts)

    @functools.cached_property
    def values(self) -> dict[str, Any]:
        """The state's values as LangGraph's snapshot gives them (read on first use)."""
        return self._read_values()


def standing(compiled: CompiledGraphARC, thread: RunnableConfig) -> Standing | Any:
    """Where ``thread`` (a thread's top namespace) stands in ``compiled``'s sync checkpointer: a
    ``Standing``, or LangGraph's own snapshot where the checkpointer is not a sync saver."""
    saver = compiled.checkpointer
    if not isinstance(saver, BaseCheckpointSaver):
        return compiled.get_state(thread)
    saved = saver.get_tuple(thread)
    if saved is None:  # nothing saved yet: what ``get_state`` gives for an empty thread
        return Standing(thread, None, None, None, (), dict)
    seen = named(compiled.inner, saved)
    return Standing(seen.config, seen.parent_config, seen.metadata, saved.checkpoint["ts"], seen.tasks,
                    lambda: dict(compiled.get_state(seen.config).values))
