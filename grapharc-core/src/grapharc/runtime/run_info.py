"""What a caller learns about the run it just made, without reading the trace back.

``compiled.last_run`` is the ``RunInfo`` of the latest run this compiled graph made in the
caller's own context (its thread, or its asyncio task): set when the run opens (status
``running``, so a stream's consumer knows the run id from the first chunk) and replaced when
it finishes. Runs made in other threads or tasks never show up in it.
"""

from __future__ import annotations

import weakref
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

RUNNING = "running"


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One run: who it was, how far it got, what it spent and why it stopped.

    ``status`` is ``running`` until the run finishes, then what ``run_end`` records
    (completed, interrupted, cancelled, budget_exceeded, error); ``stop_reason`` says why
    (a ProgressGuard's reason, the budget dimension, ``recursion_limit``, the error's type).
    ``first_step``/``last_step`` are the trace steps its nodes used (None before any ran).
    """

    run_id: str
    thread_id: str
    attempt: int
    graph: str
    status: str
    stop_reason: str | None
    first_step: int | None
    last_step: int | None
    iterations: int
    tokens: int
    cost_usd: float
    unpriced_calls: int
    duration_ms: float | None
    error: str | None = None

    @property
    def finished(self) -> bool:
        """True once the run has ended, whichever way."""
        return self.status != RUNNING


_LAST_RUNS: ContextVar[dict[int, tuple[weakref.ref[Any], RunInfo]]] = ContextVar(
    "grapharc_last_runs", default={})  # noqa: B039 - never mutated: every update sets a new dict


def remember(graph: Any, info: RunInfo) -> None:
    """Make ``info`` the latest run of ``graph`` in the caller's context."""
    runs = {key: entry for key, entry in _LAST_RUNS.get().items() if entry[0]() is not None}
    runs[id(graph)] = (weakref.ref(graph), info)
    _LAST_RUNS.set(runs)


def latest(graph: Any) -> RunInfo | None:
    """The latest run of ``graph`` made in the caller's context, if any."""
    entry = _LAST_RUNS.get().get(id(graph))
    if entry is None or entry[0]() is not graph:
        return None
    return entry[1]
