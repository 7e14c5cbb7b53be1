"""A run's lifecycle: what every governed entry point does before and after LangGraph runs.

Opening a run gives it a run id (the config's ``run_id`` if the caller chose one, else a
fresh one), the thread's next attempt and step shift (``grapharc.runtime.resume``), a
BudgetMeter, the LangGraph config that carries them (metadata for the checkpoints, the
budget's concurrency cap and recursion limit) and a ``run_start`` event. Finishing it pins
the thread's end marker and writes ``run_end`` with the status and the stop reason: a
ProgressGuard's reason, the budget dimension that ran out, the error's type, or else
completed / interrupted / cancelled. Both update the owner graph's ``last_run``.

A caller may tighten one run's budget (never loosen it) with a ``Budget`` under
``RUN_BUDGET_KEY`` in the config's ``configurable``: the run is metered against the stricter
of the graph's budget and that one in every dimension.
"""

from __future__ import annotations

import asyncio
import dataclasses
from time import perf_counter
from typing import Any
from uuid import UUID, uuid4

from langchain_core.runnables import RunnableConfig

# LangGraph names neither publicly: grapharc-core caps langgraph to the minor release its
# tests/grapharc-core/test_private_names.py checks them against
from langgraph._internal._config import DEFAULT_RECURSION_LIMIT
from langgraph._internal._constants import CONFIG_KEY_DURABILITY
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.errors import GraphRecursionError

from grapharc.runtime import route_trace
from grapharc.runtime.attribution import run_attribution
from grapharc.runtime.budget import (
    RUN_BUDGET_KEY,
    Budget,
    BudgetExceededError,
    BudgetMeter,
    InvalidBudgetError,
)
from grapharc.runtime.context import NO_STEP, RunContext, ask_mode
from grapharc.runtime.errors import MissingThreadIdError, RunInputError
from grapharc.runtime.planned import planned_tasks
from grapharc.runtime.resume import (
    META_ATTEMPT,
    META_CEILING,
    META_RUN,
    META_SHIFT,
    META_SYNC,
    Continuity,
    ThreadLedger,
    end_marker,
    plan,
)
from grapharc.runtime.run_info import RUNNING, RunInfo, remember
from grapharc.runtime.thread_spend import NOTHING, Spent
from grapharc.runtime.trace_buffer import RunTraceWriter
from grapharc.runtime.wrapped_saver import in_one_trip
from grapharc.trace import schema as schema
from grapharc.trace.writer import TraceWriter, exception_document, milliseconds


@dataclasses.dataclass(slots=True)
class OpenRun:
    """A run in progress: its context, the config LangGraph runs it with, its thread ledger."""

    run: RunContext
    config: RunnableConfig
    ledger: ThreadLedger | None
    started: float
    attribution: dict[str, Any] = dataclasses.field(default_factory=dict)
    carried: Spent = NOTHING
    """The thread's spend before this run (a thread-metered run's meter starts there)."""

    def own_spend(self) -> Spent:
        """What this run itself spent."""
        return Spent.of(self.run.meter).less(self.carried)


def termination(exc: BaseException | None, interrupted: bool, reported: str | None = None) -> tuple[str, str]:
    """(status, stop reason) for a run's ``run_end``; ``reported`` is a guard's stop reason."""
    if exc is None:
        if interrupted:
            return schema.INTERRUPTED, schema.INTERRUPTED
        return schema.COMPLETED, reported or schema.COMPLETED
    if isinstance(exc, (GeneratorExit, asyncio.CancelledError)):
        return schema.CANCELLED, schema.CANCELLED
    if isinstance(exc, BudgetExceededError):
        return schema.BUDGET_EXCEEDED, exc.dimension
    if isinstance(exc, GraphRecursionError):
        return schema.FAILED_RUN, "recursion_limit"
    return schema.FAILED_RUN, type(exc).__name__


INVENTED_ID_CHARS = 16
"""Hex characters of a run or thread id GraphARC invents (64 random bits): every trace line names
both, so a 36-character UUID would add 36 bytes a line for no more uniqueness than a trace needs."""


def invented_id() -> str:
    """A fresh run or thread id for a caller that chose none."""
    return uuid4().hex[:INVENTED_ID_CHARS]


def _chosen_run_id(given: Any) -> str:
    """The run id a caller chose in ``config["run_id"]`` (a UUID or short text), else a fresh one."""
    if given is None:
        return invented_id()
    if isinstance(given, UUID) or (isinstance(given, str) and given.strip() and len(given) <= 200
                                   and given.isprintable()):
        return str(given)
    raise RunInputError(f"config['run_id'] must be a UUID or printable text of at most 200 characters, "
                        f"got {given!r:.80}")


class RunLifecycle:
    """Opens and finishes the runs of ``owner``, one compiled graph."""

    def __init__(self, owner: Any, *, name: str, budget: Budget, trace: TraceWriter | None,
                 checkpointer: Any, inner: Any, edges: list[list[str]], thread_metered: bool) -> None:
        self.owner = owner
        self.thread_metered = thread_metered and checkpointer is not None
        self.name = name
        self.budget = budget
        self.trace = trace
        self.checkpointer = checkpointer
        self.inner = inner
        self.edges = edges

    def _thread(self, config: RunnableConfig | None) -> tuple[str | None, ThreadLedger | None]:
        conf = (config or {}).get("configurable") or {}
        thread_id = conf.get("thread_id")
        if self.checkpointer is None:
            return (None if thread_id is None else str(thread_id)), None
        if thread_id is None:
            raise MissingThreadIdError(self.name)
        return str(thread_id), ThreadLedger(self.checkpointer, config or {}, str(thread_id))

    def _begin(self, config: RunnableConfig | None, run_id: str, thread_id: str | None,
               ledger: ThreadLedger | None, continuity: Continuity, recursion_limit: int) -> OpenRun:
        budget = self._budget(config)
        thread_id = thread_id or invented_id()
        attribution = run_attribution(config)
        carried = continuity.spent if self.thread_metered else NOTHING
        run = RunContext(
            run_id=run_id,
            thread_id=thread_id,
            attempt=continuity.attempt,
            shift=continuity.shift,
            meter=BudgetMeter(budget, iterations=carried.iterations, tokens=carried.tokens,
                              cost_usd=carried.cost_usd, unpriced_calls=carried.unpriced_calls),
            trace=self.trace,
            timed=budget.max_seconds is not None,
            high_step=continuity.floor,
            thread_metered=self.thread_metered,
            asks=ask_mode((config or {}).get("configurable") or {}, self.checkpointer is not None),
        )
        cfg = self._config(config, run, continuity, recursion_limit)
        if isinstance(self.trace, RunTraceWriter):
            self.trace.own(run_id)
        if self.trace is not None:
            self.trace.emit({
                schema.PHASE: schema.RUN_START, schema.RUN_ID: run_id, schema.THREAD_ID: thread_id,
                schema.ATTEMPT: run.attempt, schema.GRAPH: self.name,
                schema.SCHEMA_VERSION_FIELD: schema.SCHEMA_VERSION,
                schema.BUDGET: dataclasses.asdict(budget), schema.EDGES: self.edges, **attribution,
            })
        opened = OpenRun(run, cfg, ledger, perf_counter(), attribution, carried)
        remember(self.owner, self._info(opened, RUNNING, None, None, None))
        return opened

    def _config(self, config: RunnableConfig | None, run: RunContext, continuity: Continuity,
                recursion_limit: int) -> RunnableConfig:
        """The LangGraph config the run executes with: the caller's, plus the thread, the
        continuity metadata every checkpoint carries, durability, concurrency and recursion.

        Without a checkpointer no checkpoint is written, so the continuity metadata is left out:
        LangGraph copies a run's metadata into every task's config, which for five keys cost
        about a quarter of what governing a trivial node costs."""
        user: RunnableConfig = config or {}
        cfg: RunnableConfig = {
            **user,
            "configurable": {**(user.get("configurable") or {}), "thread_id": run.thread_id},
        }
        if self.checkpointer is not None:
            cfg["metadata"] = {
                **(user.get("metadata") or {}),
                META_ATTEMPT: run.attempt,
                META_SHIFT: run.shift,
                META_CEILING: continuity.ceiling,
                META_SYNC: continuity.durable,
                META_RUN: run.run_id,
            }
            # a run that can be killed must leave its checkpoints on disk before the next step:
            # LangGraph's default ("async") can lose every checkpoint of a short run to SIGKILL
            cfg["configurable"].setdefault(CONFIG_KEY_DURABILITY, "sync")
        cap = run.meter.budget.max_concurrency
        if cap is not None:
            cfg["max_concurrency"] = min(cap, user.get("max_concurrency") or cap)
        cfg["recursion_limit"] = recursion_limit
        return cfg

    def _recursion_limit(self, config: RunnableConfig | None) -> int:
        """LangGraph's superstep limit for this run: the caller's, never above what the
        iteration budget allows (so the budget is what bites: a caller may only lower it),
        else the budget's, else LangGraph's default."""
        given = (config or {}).get("recursion_limit")
        iterations = self._budget(config).max_iterations
        allowed = iterations + 2 if iterations is not None else None
        if given is None:
            return allowed if allowed is not None else int(DEFAULT_RECURSION_LIMIT)
        return int(given) if allowed is None else min(int(given), allowed)

    def _budget(self, config: RunnableConfig | None) -> Budget:
        """The graph's budget, tightened by the one the caller put under ``RUN_BUDGET_KEY``."""
        requested = ((config or {}).get("configurable") or {}).get(RUN_BUDGET_KEY)
        if requested is not None and not isinstance(requested, Budget):
            raise InvalidBudgetError(f"configurable[{RUN_BUDGET_KEY!r}]", requested, "a Budget or None")
        return self.budget.tightened(requested)

    def _identity(self, config: RunnableConfig | None, durability: str | None
                  ) -> tuple[str, str | None, ThreadLedger | None, int, bool]:
        """(run id, thread id, thread ledger, recursion limit, durable) of a run about to open."""
        run_id = _chosen_run_id((config or {}).get("run_id"))
        thread_id, ledger = self._thread(config)
        chosen = durability or ((config or {}).get("configurable") or {}).get(CONFIG_KEY_DURABILITY, "sync")
        durable = self.checkpointer is not None and chosen == "sync"
        return run_id, thread_id, ledger, self._recursion_limit(config), durable

    def open(self, config: RunnableConfig | None, durability: str | None = None) -> OpenRun:
        run_id, thread_id, ledger, limit, durable = self._identity(config, durability)
        continuity = ledger.open(run_id, limit, durable) if ledger is not None \
            else plan(None, None, limit, durable)
        return self._begin(config, run_id, thread_id, ledger, continuity, limit)

    async def aopen(self, config: RunnableConfig | None, durability: str | None = None) -> OpenRun:
        run_id, thread_id, ledger, limit, durable = self._identity(config, durability)
        continuity = await ledger.aopen(run_id, limit, durable) if ledger is not None \
            else plan(None, None, limit, durable)
        return self._begin(config, run_id, thread_id, ledger, continuity, limit)

    def _info(self, opened: OpenRun, status: str, stop_reason: str | None, duration_ms: float | None,
              error: str | None) -> RunInfo:
        run, own = opened.run, opened.own_spend()
        used = run.low_step != NO_STEP
        return RunInfo(run.run_id, run.thread_id, run.attempt, self.name, status, stop_reason,
                       run.low_step if used else None, run.high_step if used else None,
                       own.iterations, own.tokens, own.cost_usd, own.unpriced_calls,
                       duration_ms, error)

    def _end(self, opened: OpenRun, exc: BaseException | None, interrupted: bool) -> None:
        run, own = opened.run, opened.own_spend()
        status, reason = termination(exc, interrupted, run.stop_reason)
        duration_ms = milliseconds((perf_counter() - opened.started) * 1000.0)
        failure = None if status == schema.CANCELLED else exc
        remember(self.owner, self._info(opened, status, reason, duration_ms,
                                        None if failure is None else f"{type(failure).__name__}: {failure}"))
        if self.trace is None:
            return
        route_trace.flush(run)
        event: dict[str, Any] = {
            schema.PHASE: schema.RUN_END, schema.RUN_ID: run.run_id, schema.THREAD_ID: run.thread_id,
            schema.ATTEMPT: run.attempt, schema.GRAPH: self.name, schema.STATUS: status,
            schema.STOP_REASON: reason, schema.ITERATIONS: own.iterations, schema.TOKENS: own.tokens,
            schema.COST_USD: own.cost_usd, schema.UNPRICED_CALLS: own.unpriced_calls,
            schema.DURATION_MS: duration_ms, **opened.attribution,
        }
        if failure is not None:
            event[schema.EXCEPTION] = exception_document(failure)
        self.trace.emit(event)
        if isinstance(self.trace, RunTraceWriter):
            self.trace.release(run.run_id)

    def finish(self, opened: OpenRun, exc: BaseException | None) -> None:
        interrupted = False
        if opened.ledger is not None:
            try:
                interrupted = self._close_ledger(opened.ledger, opened, exc)
            except Exception:
                if exc is None:
                    raise
                # the run's own error is the one to report; without this marker the
                # next attempt starts above this run's ceiling instead
        self._end(opened, exc, interrupted)

    async def afinish(self, opened: OpenRun, exc: BaseException | None) -> None:
        """Async ``finish``: ``_close_ledger`` itself in one trip where the checkpointer runs its
        calls on a thread of its own (``in_one_trip``: the graph here is compiled over it), else
        its async twin, a trip per call."""
        interrupted = False
        if opened.ledger is not None:
            try:
                if (trip := in_one_trip(self.checkpointer)) is not None:
                    interrupted = await trip(self._close_ledger, opened.ledger, opened, exc)
                else:
                    latest = await opened.ledger.aclose(opened.run.run_id, _end_marker(opened))
                    interrupted = exc is None and latest is not None and bool(
                        (await self.inner.aget_state(latest)).next)
            except Exception:
                if exc is None:
                    raise
                # as in finish: the run's own error is the one to report
        self._end(opened, exc, interrupted)

    def _close_ledger(self, ledger: ThreadLedger, opened: OpenRun, exc: BaseException | None) -> bool:
        """Pin the run's end marker on the thread's latest checkpoint; whether the run, ending
        without ``exc``, stopped with nodes still due there (interrupted)."""
        latest = ledger.close(opened.run.run_id, _end_marker(opened))
        return exc is None and latest is not None and self._has_tasks(latest)

    def _has_tasks(self, saved: CheckpointTuple) -> bool:
        """Whether the checkpoint ``saved`` (as the ledger read it to close: not read again) has
        nodes due (a snapshot's ``next``), named by LangGraph's planner without preparing a
        snapshot (``grapharc.runtime.planned``)."""
        if not isinstance(self.inner.checkpointer, BaseCheckpointSaver):
            return bool(self.inner.get_state(saved.config).next)
        return bool(planned_tasks(self.inner, saved))


def _end_marker(opened: OpenRun) -> dict[str, Any]:
    """The end marker the run's ledger pins (its attempt, shift, highest step and spend)."""
    run = opened.run
    return end_marker(run.attempt, run.shift, run.high_step,
                      Spent.of(run.meter) if run.thread_metered else None)
