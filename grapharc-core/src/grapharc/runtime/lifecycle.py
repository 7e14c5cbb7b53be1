"""A run's lifecycle: what every governed entry point does before and after LangGraph runs.

Opening a run gives it a fresh run id, the thread's next attempt and step shift
(``grapharc.runtime.resume``), a BudgetMeter, the LangGraph config that carries them
(metadata for the checkpoints, the budget's concurrency cap and recursion limit) and a
``run_start`` event. Finishing it pins the thread's end marker and writes ``run_end``
with the status and the termination reason: completed, interrupted, cancelled, the
budget dimension that ran out, or the error's type.
"""

from __future__ import annotations

import asyncio
import dataclasses
from time import perf_counter
from typing import Any
from uuid import uuid4

from langchain_core.runnables import RunnableConfig
from langgraph._internal._config import DEFAULT_RECURSION_LIMIT
from langgraph._internal._constants import CONFIG_KEY_DURABILITY
from langgraph.errors import GraphRecursionError

from grapharc.errors import GraphARCError
from grapharc.runtime.attribution import run_attribution
from grapharc.runtime.budget import Budget, BudgetExceededError, BudgetMeter
from grapharc.runtime.context import RunContext
from grapharc.runtime.resume import (
    META_ATTEMPT,
    META_CEILING,
    META_RUN,
    META_SHIFT,
    Continuity,
    ThreadLedger,
    end_marker,
    plan,
)
from grapharc.runtime.trace import TraceWriter
from grapharc.runtime.trace_buffer import RunTraceWriter


@dataclasses.dataclass(slots=True)
class OpenRun:
    """A run in progress: its context, the config LangGraph runs it with, its thread ledger."""

    run: RunContext
    config: RunnableConfig
    ledger: ThreadLedger | None
    started: float
    attribution: dict[str, Any] = dataclasses.field(default_factory=dict)


def termination(exc: BaseException | None, interrupted: bool) -> tuple[str, str]:
    """(status, reason) for a run's ``run_end`` event."""
    if exc is None:
        return ("interrupted", "interrupted") if interrupted else ("completed", "completed")
    if isinstance(exc, (GeneratorExit, asyncio.CancelledError)):
        return "cancelled", "cancelled"
    if isinstance(exc, BudgetExceededError):
        return "budget_exceeded", exc.dimension
    if isinstance(exc, GraphRecursionError):
        return "error", "recursion_limit"
    return "error", type(exc).__name__


class RunLifecycle:
    """Opens and finishes the runs of one compiled graph."""

    def __init__(
        self, *, name: str, budget: Budget, trace: TraceWriter | None, checkpointer: Any, inner: Any
    ) -> None:
        self.name = name
        self.budget = budget
        self.trace = trace
        self.checkpointer = checkpointer
        self.inner = inner

    def _thread(self, config: RunnableConfig | None) -> tuple[str | None, ThreadLedger | None]:
        conf = (config or {}).get("configurable") or {}
        thread_id = conf.get("thread_id")
        if self.checkpointer is None:
            return (None if thread_id is None else str(thread_id)), None
        if thread_id is None:
            raise GraphARCError(
                f"graph {self.name!r} has a checkpointer, so a run needs config['configurable']['thread_id']",
                hint="pass config={'configurable': {'thread_id': '...'}}",
            )
        return str(thread_id), ThreadLedger(self.checkpointer, config or {}, str(thread_id))

    def _begin(
        self,
        config: RunnableConfig | None,
        run_id: str,
        thread_id: str | None,
        ledger: ThreadLedger | None,
        continuity: Continuity,
        recursion_limit: int,
    ) -> OpenRun:
        budget = self.budget
        thread_id = thread_id or uuid4().hex
        attribution = run_attribution(config)
        run = RunContext(
            run_id=run_id,
            thread_id=thread_id,
            attempt=continuity.attempt,
            shift=continuity.shift,
            meter=BudgetMeter(budget),
            trace=self.trace,
            timed=budget.max_seconds is not None,
            high_step=continuity.floor,
        )
        user = dict(config or {})
        cfg: dict[str, Any] = {
            **user,
            "configurable": {**(user.get("configurable") or {}), "thread_id": thread_id},
            "metadata": {
                **(user.get("metadata") or {}),
                META_ATTEMPT: run.attempt,
                META_SHIFT: run.shift,
                META_CEILING: continuity.ceiling,
                META_RUN: run_id,
            },
        }
        if self.checkpointer is not None:
            # a run that can be killed must leave its checkpoints on disk before the next step:
            # LangGraph's default ("async") can lose every checkpoint of a short run to SIGKILL
            cfg["configurable"].setdefault(CONFIG_KEY_DURABILITY, "sync")
        if budget.max_concurrency is not None:
            cfg["max_concurrency"] = min(
                budget.max_concurrency, user.get("max_concurrency") or budget.max_concurrency
            )
        cfg["recursion_limit"] = recursion_limit
        if isinstance(self.trace, RunTraceWriter):
            self.trace.own(run_id)
        if self.trace is not None:
            self.trace.event(
                "run_start",
                run_id=run_id,
                thread_id=thread_id,
                attempt=run.attempt,
                graph=self.name,
                budget=dataclasses.asdict(budget),
                **attribution,
            )
        return OpenRun(run, cfg, ledger, perf_counter(), attribution)

    def _recursion_limit(self, config: RunnableConfig | None) -> int:
        """LangGraph's superstep limit for this run: the caller's, else the iteration
        budget's (so the budget is what bites), else LangGraph's default."""
        given = (config or {}).get("recursion_limit")
        if given is not None:
            return int(given)
        if self.budget.max_iterations is not None:
            return self.budget.max_iterations + 2
        return int(DEFAULT_RECURSION_LIMIT)

    def open(self, config: RunnableConfig | None) -> OpenRun:
        run_id = str(uuid4())
        thread_id, ledger = self._thread(config)
        limit = self._recursion_limit(config)
        continuity = ledger.open(run_id, limit) if ledger is not None else plan(None, None, limit)
        return self._begin(config, run_id, thread_id, ledger, continuity, limit)

    async def aopen(self, config: RunnableConfig | None) -> OpenRun:
        run_id = str(uuid4())
        thread_id, ledger = self._thread(config)
        limit = self._recursion_limit(config)
        continuity = await ledger.aopen(run_id, limit) if ledger is not None else plan(None, None, limit)
        return self._begin(config, run_id, thread_id, ledger, continuity, limit)

    def _end(self, opened: OpenRun, exc: BaseException | None, interrupted: bool) -> None:
        if self.trace is None:
            return
        run, meter = opened.run, opened.run.meter
        status, reason = termination(exc, interrupted)
        fields: dict[str, Any] = {}
        if exc is not None and status != "cancelled":
            fields["error"] = {"type": type(exc).__name__, "message": str(exc)}
        self.trace.event(
            "run_end",
            run_id=run.run_id,
            thread_id=run.thread_id,
            attempt=run.attempt,
            graph=self.name,
            status=status,
            reason=reason,
            iterations=meter.iterations,
            tokens=meter.tokens,
            cost_usd=meter.cost_usd,
            unpriced_calls=meter.unpriced_calls,
            duration_ms=(perf_counter() - opened.started) * 1000.0,
            **opened.attribution,
            **fields,
        )
        if isinstance(self.trace, RunTraceWriter):
            self.trace.release(run.run_id)

    def finish(self, opened: OpenRun, exc: BaseException | None) -> None:
        interrupted = False
        if opened.ledger is not None:
            run = opened.run
            marker = end_marker(run.attempt, run.shift, run.high_step)
            try:
                latest = opened.ledger.close(run.run_id, marker)
                interrupted = exc is None and latest is not None and bool(self.inner.get_state(latest).next)
            except Exception:
                if exc is None:
                    raise
                # the run's own error is the one to report; without this marker the
                # next attempt starts above this run's ceiling instead
        self._end(opened, exc, interrupted)

    async def afinish(self, opened: OpenRun, exc: BaseException | None) -> None:
        interrupted = False
        if opened.ledger is not None:
            run = opened.run
            marker = end_marker(run.attempt, run.shift, run.high_step)
            try:
                latest = await opened.ledger.aclose(run.run_id, marker)
                interrupted = (
                    exc is None and latest is not None and bool((await self.inner.aget_state(latest)).next)
                )
            except Exception:
                if exc is None:
                    raise
                # as in _finish: the run's own error is the one to report
        self._end(opened, exc, interrupted)
