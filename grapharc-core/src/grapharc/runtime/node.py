"""Governed node execution: the wrapper every node runs inside.

Per execution it checks the run context (fail closed), charges one iteration, writes
the trace ``start``, hands the node a deep copy of the state, opens the node's token
scope, arms the run's deadline when ``max_seconds`` is set, checks every write against
the allowlist and the state's types, and writes ``end`` (or ``error``). A node that
overran its deadline raises, so none of its writes land.

LangGraph inspects whatever callable it is given (signature, type hints, ``__wrapped__``,
and the bytecode of a RunnableCallable's function); ``governed_runnable`` hands it a
``GovernedRunnable`` instead, which it has nothing to inspect in, so adding a node
costs about what it costs in plain LangGraph.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import run_in_executor
from langgraph.constants import END
from langgraph.errors import GraphBubbleUp, GraphInterrupt, ParentCommand
from langgraph.types import Command, Send
from pydantic import BaseModel

from grapharc.runtime import route_trace
from grapharc.runtime.budget import BudgetExceededError, BudgetMeter
from grapharc.runtime.context import CURRENT_RUN, RunContext
from grapharc.runtime.deadline import NodeTimeoutError, async_deadline, deadline
from grapharc.runtime.errors import (
    AsyncNodeError,
    DagViolationError,
    GraphRoutingError,
    MissingRunContextError,
    NodeOutputError,
)
from grapharc.runtime.state import StateContract
from grapharc.runtime.tokens import NodeUsage, node_usage_scope
from grapharc.trace import schema as schema
from grapharc.trace.writer import end_fields, node_identity

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
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class GraphFacts:
    """What a node wrapper needs to know about the graph it runs in; ``routers`` counts the
    conditional edges (and fan-outs) leaving each node."""

    name: str
    contract: StateContract
    nodes: frozenset[str]
    dag: bool
    routers: Mapping[str, int] = field(default_factory=dict)
    targets: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "targets", self.nodes | {END})


_ATOMIC = frozenset({int, float, str, bool, bytes, type(None)})
_deepcopy = copy.deepcopy
_set = object.__setattr__


def _fresh(value: Any) -> Any:
    """A private copy of one state value.

    Immutable values are shared, containers are rebuilt, pydantic models are copied
    field by field (a frozen model holding only immutable values is shared), anything
    else goes through ``copy.deepcopy``. No memo is needed: a state that LangGraph
    validated into the model cannot contain a cycle.
    """
    kind = type(value)
    if kind in _ATOMIC:
        return value
    if kind is list:
        return [_fresh(item) for item in value]
    if kind is dict:
        return {key: _fresh(item) for key, item in value.items()}
    if kind is tuple:
        return tuple(_fresh(item) for item in value)
    if isinstance(value, BaseModel):
        if (
            value.model_config.get("frozen")
            and value.__pydantic_private__ is None
            and all(type(item) in _ATOMIC for item in value.__dict__.values())
        ):
            return value
        return copy_for_node(value)
    return _deepcopy(value)


def copy_for_node(state: Any) -> Any:
    """The deep copy a node receives, so in-place mutation cannot bypass the write channel.

    For a pydantic model this is what ``model_copy(deep=True)`` does, with ``_fresh``
    in place of ``copy.deepcopy`` for the field values (about half the cost per step).
    """
    if not isinstance(state, BaseModel):
        return _fresh(state)
    cls = type(state)
    clone = cls.__new__(cls)
    _set(clone, "__dict__", {name: _fresh(value) for name, value in state.__dict__.items()})
    extra, private = state.__pydantic_extra__, state.__pydantic_private__
    _set(clone, "__pydantic_extra__", None if extra is None else _deepcopy(extra))
    _set(clone, "__pydantic_fields_set__", set(state.__pydantic_fields_set__))
    _set(clone, "__pydantic_private__", None if private is None else _deepcopy(private))
    return clone


def seconds_exceeded(meter: BudgetMeter, node: str) -> BudgetExceededError:
    """The error a run's exhausted max_seconds ends it with."""
    limit = meter.budget.max_seconds or 0.0
    allowed = meter.budget.effective_seconds or 0.0
    used = round(allowed - (meter.seconds_left() or 0.0), 3)
    return BudgetExceededError("seconds", limit, used, node)


class Settler:
    """Turns what a node returned into what LangGraph may apply, checking every write."""

    __slots__ = ("contract", "dag", "declared", "graph", "node", "schema", "targets")

    def __init__(self, node: str, declared: frozenset[str], facts: GraphFacts) -> None:
        self.node = node
        self.declared = declared
        self.contract = facts.contract
        self.schema = facts.contract.schema
        self.targets = facts.targets
        self.dag = facts.dag
        self.graph = facts.name

    def __call__(self, out: Any, state: Any) -> tuple[Any, dict[str, Any], dict[str, Any] | None]:
        """(value for LangGraph, state delta for the trace, extra trace fields)."""
        if isinstance(out, dict):
            current = state if isinstance(state, self.schema) else None
            writes = self.contract.check_writes(self.node, self.declared, out, current)
            return writes, writes, None
        if out is None:
            return None, {}, None
        if isinstance(out, Command):
            return self.command(out, state)
        raise NodeOutputError(self.node, out)

    def command(
        self, cmd: Command[Any], state: Any
    ) -> tuple[Command[Any], dict[str, Any], dict[str, Any] | None]:
        """Check a Command's update like any write and its goto against the graph's nodes."""
        if cmd.graph == Command.PARENT:  # addressed to the parent; the hosting node checks it
            return cmd, {}, None
        writes = self.update_writes(cmd.update, state)
        goto = self.check_goto(cmd.goto)
        extra = {schema.GOTO: goto} if goto else None
        return dataclasses.replace(cmd, update=writes or None), writes, extra

    def update_writes(self, update: Any, state: Any) -> dict[str, Any]:
        """The checked writes of a Command's ``update`` (a dict or (field, value) pairs)."""
        if update is None:
            return {}
        if isinstance(update, (list, tuple)) and all(
            isinstance(pair, tuple) and len(pair) == 2 for pair in update
        ):
            update = dict(update)
        if not isinstance(update, dict):
            raise NodeOutputError(self.node, update)
        current = state if isinstance(state, self.schema) else None
        return self.contract.check_writes(self.node, self.declared, update, current)

    def check_goto(self, goto: Any) -> list[str]:
        """Validate Command(goto=...) targets; returns their names for the trace."""
        targets = goto if isinstance(goto, (list, tuple)) else ([goto] if goto else [])
        names: list[str] = []
        for target in targets:
            name = target.node if isinstance(target, Send) else target
            if name not in self.targets:
                raise GraphRoutingError(self.node, name, self.targets)
            names.append(name)
        if names and self.dag:
            raise DagViolationError(
                f"node {self.node!r} returned Command(goto={names!r}) in dag graph "
                f"{self.graph!r}, which routes only along its declared edges",
                hint="add the edge to the graph instead of routing dynamically",
            )
        return names


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
        run: RunContext,
        step: int,
        started: float,
        usage: NodeUsage,
        delta: dict[str, Any],
        extra: dict[str, Any] | None,
        config: RunnableConfig,
    ) -> None:
        """Write ``end``: the delta that landed, the duration and the node's own spend (held for
        its routers to add the route, if it has any)."""
        trace = run.trace
        if trace is None:
            return
        event = end_fields(node_identity(schema.END, run.run_id, run.thread_id, run.attempt, self.graph,
                                         self.node, step),
                           delta, (perf_counter() - started) * 1000.0, usage.tokens, usage.cost_usd)
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
        gov.done(run, step, started, usage, delta, extra, config)
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
        gov.done(run, step, started, usage, delta, extra, config)
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
        return self._sync_body()(input, self._given(config))

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
    assert body is not None
    return GovernedRunnable(spec.name, facts.name, make_sync(spec, facts, body), None)


def function_bodies(spec: DeclaredNode) -> tuple[Body | None, AsyncBody | None]:
    """The (sync, async) bodies that call a plain node function, with config if it wants it."""
    fn = spec.fn
    if spec.is_async:
        if spec.wants_config:
            return None, fn
        return None, lambda state, config: fn(state)
    if spec.wants_config:
        return fn, None
    return (lambda state, config: fn(state)), None


def recast_ns(ns: str) -> str:
    """A checkpoint namespace without its task ids (as LangGraph addresses parent commands)."""
    return "|".join(part.split(":")[0] for part in ns.split("|") if not part.isdigit())


def check_parent_command(settle: Settler, bubble: ParentCommand, state: Any, config: RunnableConfig) -> None:
    """Check a subgraph's Command(graph=PARENT) that lands on this (hosting) node, in place."""
    cmd = bubble.args[0]
    ns = config.get("configurable", {}).get("checkpoint_ns", "")
    if cmd.graph not in (ns, recast_ns(ns), settle.node):
        return
    writes = settle.update_writes(cmd.update, state)
    settle.check_goto(cmd.goto)
    bubble.args = (dataclasses.replace(cmd, update=writes or None),)
