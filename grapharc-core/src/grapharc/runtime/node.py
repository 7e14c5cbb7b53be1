"""Governed node execution: the wrapper every node runs inside.

Per execution it checks the run context (fail closed), charges one iteration, writes
the trace ``start``, hands the node a deep copy of the state (``grapharc.runtime.state_copy``),
opens the node's token scope, arms the run's deadline when ``max_seconds`` is set, checks
every write against the allowlist and the state's types (``grapharc.runtime.node_output``),
and writes ``end`` (or ``error``). A node that overran its deadline raises, so none of its
writes land.

LangGraph inspects whatever callable it is given (signature, type hints, ``__wrapped__``,
and the bytecode of a RunnableCallable's function); ``governed_runnable`` hands it a
``GovernedRunnable`` instead, which it has nothing to inspect in, so adding a node
costs about what it costs in plain LangGraph.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import run_in_executor
from langgraph.config import get_store
from langgraph.errors import GraphBubbleUp, GraphInterrupt

from grapharc.runtime import route_trace
from grapharc.runtime.budget import BudgetExceededError, BudgetMeter
from grapharc.runtime.context import CURRENT_RUN, RunContext
from grapharc.runtime.deadline import NodeTimeoutError, async_deadline, deadline
from grapharc.runtime.errors import AsyncNodeError, MissingRunContextError
from grapharc.runtime.node_output import GraphFacts, Settler
from grapharc.runtime.state_copy import copy_for_node
from grapharc.runtime.tokens import NodeUsage, model_fields, node_usage_scope
from grapharc.trace import schema as schema
from grapharc.trace.writer import TraceWriter, end_fields, node_identity

Body = Callable[[Any, RunnableConfig], Any]
AsyncBody = Callable[[Any, RunnableConfig], Awaitable[Any]]

SHARED_COPY = {schema.COPY: schema.SHARED_COPY}


@dataclass(frozen=True, slots=True)
class DeclaredNode:
    """A node as declared: its body, its write allowlist and how LangGraph should run it.

    ``fresh_input`` marks a node whose input is built for it alone (a fan-out worker's
    payload, made from the router's private copy of the state), so copying it again
    would protect nothing.
    """

    name: str
    fn: Any
    writes: frozenset[str]
    copy_state: bool = True
    fresh_input: bool = False
    is_async: bool = False
    wants_config: bool = False
    wants_store: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)


def seconds_exceeded(meter: BudgetMeter, node: str) -> BudgetExceededError:
    """The error a run's exhausted max_seconds ends it with."""
    limit = meter.budget.max_seconds or 0.0
    allowed = meter.budget.effective_seconds or 0.0
    used = round(allowed - (meter.seconds_left() or 0.0), 3)
    return BudgetExceededError("seconds", limit, used, node)


class NodeGovernor:
    """The per-execution bookkeeping around a node body: identity, charge and trace events."""

    __slots__ = ("copy_state", "graph", "marks", "node", "routers", "settle")

    def __init__(self, spec: DeclaredNode, facts: GraphFacts) -> None:
        self.node = spec.name
        self.graph = facts.name
        self.copy_state = spec.copy_state and not spec.fresh_input
        self.marks = None if spec.copy_state else SHARED_COPY
        self.settle = Settler(spec.name, spec.writes, facts)
        self.routers = facts.routers.get(spec.name, 0)

    def enter(self, config: RunnableConfig) -> tuple[RunContext, int, float]:
        """Check the run context (fail closed), number the step, charge one iteration and
        write ``start``."""
        run = CURRENT_RUN.get()
        if run is None:
            raise MissingRunContextError(self.node)
        step = run.shift + config["metadata"]["langgraph_step"]
        if step > run.high_step:
            run.high_step = step
        if step < run.low_step:
            run.low_step = step
        run.meter.charge_iteration(self.node)
        if run.trace is not None:
            run.trace.start(
                run.run_id,
                run.thread_id,
                run.attempt,
                self.graph,
                self.node,
                step,
                extra=self.marks,
            )
        return run, step, perf_counter()

    def done(
        self,
        trace: TraceWriter,
        run: RunContext,
        step: int,
        started: float,
        usage: NodeUsage,
        delta: dict[str, Any],
        extra: dict[str, Any] | None,
        config: RunnableConfig,
    ) -> None:
        """Write ``end`` to the run's ``trace``: the delta that landed, the duration and the node's
        own spend (held for its routers to add the route, if it has any)."""
        event = end_fields(node_identity(schema.END, run.run_id, run.thread_id, run.attempt, self.graph,
                                         self.node, step),
                           delta, (perf_counter() - started) * 1000.0, usage.tokens, usage.cost_usd)
        if usage.calls:
            event.update(model_fields(usage))
        extra = _merge(self.marks, extra)
        if not self.routers:
            trace.write(event, extra)
            return
        if extra:
            event.update(extra)
        route_trace.hold(run, config, event, self.routers)

    def failed(self, run: RunContext, step: int, started: float, exc: BaseException) -> None:
        """Write ``error``, or an ``interrupt`` / ``parent_command`` event for LangGraph's
        control-flow exceptions, which are neither an end nor an error."""
        trace = run.trace
        if trace is None:
            return
        duration_ms = (perf_counter() - started) * 1000.0
        if isinstance(exc, GraphBubbleUp):
            phase = schema.INTERRUPT if isinstance(exc, GraphInterrupt) else schema.PARENT_COMMAND
            trace.paused(phase, run.run_id, run.thread_id, run.attempt, self.graph, self.node, step,
                         duration_ms=duration_ms)
            return
        trace.error(
            run.run_id,
            run.thread_id,
            run.attempt,
            self.graph,
            self.node,
            step,
            duration_ms=duration_ms,
            exception=exc,
            extra=self.marks,
        )


def _timed(run: RunContext, node: str, body: Body, view: Any, config: RunnableConfig) -> Any:
    """Run ``body`` under the run's remaining max_seconds; exhaustion ends the run."""
    try:
        with deadline(run.meter.seconds_left(), node=node):
            return body(view, config)
    except NodeTimeoutError as exc:
        raise seconds_exceeded(run.meter, node) from exc


async def _atimed(run: RunContext, node: str, body: AsyncBody, view: Any, config: RunnableConfig) -> Any:
    """Async ``_timed``: the deadline cancels the node's task."""
    try:
        async with async_deadline(run.meter.seconds_left(), node=node):
            return await body(view, config)
    except NodeTimeoutError as exc:
        raise seconds_exceeded(run.meter, node) from exc


def make_sync(spec: DeclaredNode, facts: GraphFacts, body: Body) -> Body:
    """The synchronous governed wrapper around ``body``."""
    gov = NodeGovernor(spec, facts)
    node, copy_state, settle = spec.name, gov.copy_state, gov.settle

    def run_node(state: Any, config: RunnableConfig) -> Any:
        run, step, started = gov.enter(config)
        try:
            view = copy_for_node(state) if copy_state else state
            with node_usage_scope(run.meter, node) as usage:
                out = _timed(run, node, body, view, config) if run.timed else body(view, config)
            result, delta, extra = settle(out, state)
        except BaseException as exc:
            gov.failed(run, step, started, exc)
            raise
        if run.trace is not None:
            gov.done(run.trace, run, step, started, usage, delta, extra, config)
        return result

    return run_node


def make_async(spec: DeclaredNode, facts: GraphFacts, body: AsyncBody) -> AsyncBody:
    """The asynchronous governed wrapper around an ``async def`` body."""
    gov = NodeGovernor(spec, facts)
    node, copy_state, settle = spec.name, gov.copy_state, gov.settle

    async def run_node(state: Any, config: RunnableConfig) -> Any:
        run, step, started = gov.enter(config)
        try:
            view = copy_for_node(state) if copy_state else state
            with node_usage_scope(run.meter, node) as usage:
                if run.timed:
                    out = await _atimed(run, node, body, view, config)
                else:
                    out = await body(view, config)
            result, delta, extra = settle(out, state)
        except BaseException as exc:
            gov.failed(run, step, started, exc)
            raise
        if run.trace is not None:
            gov.done(run.trace, run, step, started, usage, delta, extra, config)
        return result

    return run_node


def _merge(marks: dict[str, Any] | None, extra: dict[str, Any] | None) -> dict[str, Any] | None:
    if extra is None:
        return marks
    return extra if marks is None else {**marks, **extra}


class GovernedRunnable(Runnable[Any, Any]):
    """What LangGraph runs for a governed node or router: our wrapper, nothing to inspect.

    A plain ``Runnable`` subclass rather than LangGraph's ``RunnableCallable``: LangGraph
    disassembles a RunnableCallable's function (looking for subgraphs) every time a node
    is added, which for a closure like ours costs more than building the rest of the node.
    ``func`` / ``afunc`` take ``(input, config)``; a sync-only body runs in a thread under
    the async entry points when ``offload`` is set, as LangGraph does for sync functions.
    """

    def __init__(
        self,
        name: str,
        graph: str,
        func: Callable[[Any, RunnableConfig], Any] | None,
        afunc: Callable[[Any, RunnableConfig], Awaitable[Any]] | None,
        *,
        offload: bool = True,
    ) -> None:
        self.name = name
        self.graph = graph
        self.func = func
        self.afunc = afunc
        self.offload = offload

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run the sync wrapper (async-only nodes are refused: they need ainvoke)."""
        func = self.func
        if func is None or config is None:  # checked together: this runs once per node execution
            return self._sync_body()(input, self._given(config))
        return func(input, config)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run the async wrapper, or the sync one (in a thread when ``offload``)."""
        given = self._given(config)
        if self.afunc is not None:
            return await self.afunc(input, given)
        func = self._sync_body()
        if self.offload:
            return await run_in_executor(None, func, input, given)
        return func(input, given)

    def _sync_body(self) -> Body:
        if self.func is None:
            raise AsyncNodeError(self.graph, {self.get_name()})
        return self.func

    def _given(self, config: RunnableConfig | None) -> RunnableConfig:
        """LangGraph always hands a node its config; a call without one is not inside a run."""
        if config is None:
            raise MissingRunContextError(self.get_name())
        return config


def governed_runnable(
    spec: DeclaredNode, facts: GraphFacts, body: Body | None, abody: AsyncBody | None
) -> GovernedRunnable:
    """The runnable LangGraph runs for this node (sync and async paths)."""
    if abody is not None:
        return GovernedRunnable(spec.name, facts.name, None, make_async(spec, facts, abody))
    assert body is not None  # noqa: S101 -- narrows the type: a node has a sync body or an async one
    return GovernedRunnable(spec.name, facts.name, make_sync(spec, facts, body), None)


def function_bodies(spec: DeclaredNode) -> tuple[Body | None, AsyncBody | None]:
    """The (sync, async) bodies that call a plain node function, with its ``config`` and its
    ``store`` (the graph's, from LangGraph's ``get_store()``; None without one) if it asks for them."""
    fn = spec.fn
    body: Callable[[Any, RunnableConfig], Any]
    if spec.wants_store and spec.wants_config:
        def body(state: Any, config: RunnableConfig) -> Any:
            return fn(state, config, store=get_store())
    elif spec.wants_store:
        def body(state: Any, config: RunnableConfig) -> Any:
            return fn(state, store=get_store())
    elif spec.wants_config:
        body = fn
    else:
        def body(state: Any, config: RunnableConfig) -> Any:
            return fn(state)
    return (None, body) if spec.is_async else (body, None)

