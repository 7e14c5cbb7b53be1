"""The run context: what every node execution of one run shares, carried in a ContextVar.

A compiled GraphARC sets it in its entry points; node wrappers read it and refuse to
run without it, which is what makes ``compiled.inner.invoke()`` fail closed. LangGraph
copies the context into its worker threads and tasks, so parallel nodes see it too.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from grapharc.runtime.budget import BudgetMeter

if TYPE_CHECKING:
    from grapharc.trace.writer import TraceWriter

DURABLE_ASKS = "grapharc_durable_asks"
"""The ``configurable`` key a session turn sets so the run's asks become durable approvals."""


class AskMode(StrEnum):
    """How a run's asks are answered (set on the run context when it opens; see
    :mod:`grapharc.decisions.approval`)."""

    SESSION = "session"
    CHECKPOINT = "checkpoint"
    NONE = "none"


def ask_mode(configurable: dict[str, Any], checkpointed: bool) -> AskMode:
    """How asks are answered in a run with these ``configurable`` settings."""
    if configurable.get(DURABLE_ASKS):
        return AskMode.SESSION
    return AskMode.CHECKPOINT if checkpointed else AskMode.NONE


NO_STEP = 1 << 62
"""``low_step`` of a run that has not executed a node yet."""


@dataclass(slots=True)
class HeldEnd:
    """A routing node's ``end`` event, held until its router(s) say where the run goes next."""

    event: dict[str, Any]
    waiting: int
    keys: list[Any] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)


@dataclass(slots=True)
class RunContext:
    """Identity, meter and trace of one run (one attempt on a thread).

    ``shift`` maps LangGraph's superstep to the trace step (step = shift + superstep) so
    steps keep rising across attempts on a thread; ``low_step``/``high_step`` are the lowest
    and highest steps used. ``stop_reason`` is what a ProgressGuard last reported, and
    ``held`` the end events of routing nodes whose routers have not run yet (by task).
    """

    run_id: str
    thread_id: str
    attempt: int
    shift: int
    meter: BudgetMeter
    trace: TraceWriter | None
    timed: bool
    high_step: int = 0
    low_step: int = NO_STEP
    stop_reason: str | None = None
    held: dict[str, HeldEnd] = field(default_factory=dict)
    root: RunContext | None = None
    """The top-level run a subgraph's context belongs to (None for the top level itself)."""
    thread_metered: bool = False
    """True when the meter carries the thread's spend (``grapharc.runtime.thread_spend``)."""
    asks: AskMode = AskMode.NONE
    """How the run's asks are answered: in a session, by a checkpointed pause, or by nobody."""

    def child(self) -> RunContext:
        """The context a subgraph's nodes run under: same run, its own step numbering."""
        return RunContext(self.run_id, self.thread_id, self.attempt, 0, self.meter, self.trace, self.timed,
                          root=self.root or self, thread_metered=self.thread_metered, asks=self.asks)


CURRENT_RUN: ContextVar[RunContext | None] = ContextVar("grapharc_run", default=None)


def record_stop_reason(reason: str) -> None:
    """Note on the current run (if any) why it is about to stop; ``run_end`` carries it."""
    run = CURRENT_RUN.get()
    if run is not None:
        (run.root or run).stop_reason = reason
