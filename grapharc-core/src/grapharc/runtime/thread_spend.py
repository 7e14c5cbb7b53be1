"""A thread-wide budget: what a thread has spent rides on its checkpoints, so a new attempt
(after a pause, an approval, a crash) carries on from it instead of starting from nothing.

A graph compiled with ``budget_scope="thread"`` (the session layer compiles its graphs so)
meters the thread, not the run: its checkpointer is wrapped in ``SpendStampingSaver``, which
writes the run's meter totals (iterations, tokens, cost, unpriced calls) into the metadata
of every checkpoint it saves, and each run's end marker carries them too. A new attempt reads
them off the thread's latest checkpoint (``carried``) and starts its meter there, so the
budget's ceilings bound the thread. ``max_seconds`` stays per attempt: a thread paused for a
day waiting on a person has not worked that day. What a kill interrupted is lost only for the
superstep it interrupted: the last checkpoint before it carries everything spent until then.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from grapharc.runtime.budget import BudgetMeter
from grapharc.runtime.context import CURRENT_RUN
from grapharc.runtime.wrapped_saver import WrappedSaver

META_SPENT = "grapharc_spent"
"""Prefix of the checkpoint metadata keys holding the thread's spend (one scalar each)."""
SPENT_MARKER = "spent"
"""Key of the spend inside a run's end marker."""


@dataclass(frozen=True, slots=True)
class Spent:
    """A thread's spend so far."""

    iterations: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0

    @classmethod
    def of(cls, meter: BudgetMeter) -> Spent:
        return cls(meter.iterations, meter.tokens, meter.cost_usd, meter.unpriced_calls)

    @classmethod
    def read(cls, values: Any, prefix: str = "") -> Spent | None:
        """The spend stored under ``prefix`` + field names in ``values`` (None if absent or bad)."""
        if not isinstance(values, dict) or f"{prefix}tokens" not in values:
            return None
        try:
            return cls(int(values[f"{prefix}iterations"]), int(values[f"{prefix}tokens"]),
                       float(values[f"{prefix}cost_usd"]), int(values[f"{prefix}unpriced_calls"]))
        except (KeyError, TypeError, ValueError):
            return None

    def written(self, prefix: str = "") -> dict[str, int | float]:
        """The spend as scalar entries (what checkpoint metadata can hold)."""
        return {f"{prefix}iterations": self.iterations, f"{prefix}tokens": self.tokens,
                f"{prefix}cost_usd": self.cost_usd, f"{prefix}unpriced_calls": self.unpriced_calls}

    def later(self, other: Spent | None) -> Spent:
        """The later of two readings of one thread's spend (it only grows): the larger of each."""
        if other is None:
            return self
        return Spent(max(self.iterations, other.iterations), max(self.tokens, other.tokens),
                     max(self.cost_usd, other.cost_usd), max(self.unpriced_calls, other.unpriced_calls))

    def less(self, earlier: Spent) -> Spent:
        """What was spent since ``earlier``."""
        return Spent(self.iterations - earlier.iterations, self.tokens - earlier.tokens,
                     self.cost_usd - earlier.cost_usd, self.unpriced_calls - earlier.unpriced_calls)


NOTHING = Spent()


def carried(latest: CheckpointTuple | None, marker_channel: str) -> Spent:
    """The thread's spend as its latest checkpoint records it (metadata and end markers)."""
    if latest is None:
        return NOTHING
    spent = Spent.read(latest.metadata or {}, f"{META_SPENT}_") or NOTHING
    for _task, channel, value in latest.pending_writes or ():
        if channel == marker_channel and isinstance(value, dict):
            spent = spent.later(Spent.read(value.get(SPENT_MARKER)))
    return spent


class SpendStampingSaver(WrappedSaver):
    """Writes the current thread-metered run's spend into every checkpoint it saves."""

    def rewrap(self, inner: BaseCheckpointSaver[Any]) -> SpendStampingSaver:
        return SpendStampingSaver(inner)

    def stamp(self, metadata: Any) -> Any:
        run = CURRENT_RUN.get()
        if run is None or not run.thread_metered:
            return metadata
        return {**metadata, **Spent.of(run.meter).written(f"{META_SPENT}_")}
