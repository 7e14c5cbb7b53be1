"""The run context: what every node execution of one run shares, carried in a ContextVar.

A compiled GraphARC sets it in its entry points; node wrappers read it and refuse to
run without it, which is what makes ``compiled.inner.invoke()`` fail closed. LangGraph
copies the context into its worker threads and tasks, so parallel nodes see it too.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from grapharc.runtime.budget import BudgetMeter

if TYPE_CHECKING:
    from grapharc.runtime.trace import TraceWriter


@dataclass(slots=True)
class RunContext:
    """Identity, meter and trace of one run (one attempt on a thread).

    ``shift`` maps LangGraph's superstep to the trace step (step = shift + superstep) so
    steps keep rising across attempts on a thread; ``high_step`` is the highest step used.
    """

    run_id: str
    thread_id: str
    attempt: int
    shift: int
    meter: BudgetMeter
    trace: TraceWriter | None
    timed: bool
    high_step: int = field(default=0)

    def child(self) -> RunContext:
        """The context a subgraph's nodes run under: same run, its own step numbering."""
        return RunContext(self.run_id, self.thread_id, self.attempt, 0, self.meter, self.trace, self.timed)


CURRENT_RUN: ContextVar[RunContext | None] = ContextVar("grapharc_run", default=None)
