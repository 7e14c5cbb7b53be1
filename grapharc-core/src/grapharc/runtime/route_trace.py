"""A routing node's ``end`` event carries its route: what its router returned, and where to.

LangGraph runs a node's conditional edges after its body, in the same task. So the node
wrapper of a node with routers holds its ``end`` event (``hold``) instead of writing it;
each of its routers adds its key and destinations (``release``), and the last one writes
the event with its ``route``. A router that raises turns the held end into the node's
``error`` (``fail``): the node's writes do not land when its task fails. Anything still
held when the run finishes is written without a route (``flush``), so no end is lost.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langchain_core.runnables import RunnableConfig

from grapharc.runtime.context import CURRENT_RUN, HeldEnd, RunContext
from grapharc.trace import schema as schema
from grapharc.trace.writer import exception_document


def task_key(config: RunnableConfig) -> str:
    """The task a node and its routers share (its checkpoint namespace, unique per task)."""
    return str(config["configurable"].get("checkpoint_ns", ""))


def hold(run: RunContext, config: RunnableConfig, event: dict[str, Any], routers: int) -> None:
    """Keep a routing node's end event until its ``routers`` routers have run."""
    run.held[task_key(config)] = HeldEnd(event, routers)


def release(config: RunnableConfig, key: Any, targets: Iterable[str]) -> None:
    """Record one router's decision on its node's held end; the last router writes the event."""
    run = CURRENT_RUN.get()
    if run is None or not run.held or run.trace is None:
        return
    task = task_key(config)
    held = run.held.get(task)
    if held is None:
        return
    held.keys.append(key)
    held.targets.extend(targets)
    held.waiting -= 1
    if held.waiting > 0:
        return
    del run.held[task]
    keys = held.keys[0] if len(held.keys) == 1 else held.keys
    held.event[schema.ROUTE] = {schema.ROUTE_KEY: keys, schema.ROUTE_TO: list(dict.fromkeys(held.targets))}
    run.trace.append(held.event)


def fail(config: RunnableConfig, exc: BaseException) -> None:
    """A router raised: its node's held end becomes an ``error`` event, since nothing lands."""
    run = CURRENT_RUN.get()
    if run is None or not run.held or run.trace is None:
        return
    held = run.held.pop(task_key(config), None)
    if held is None:
        return
    event = held.event
    error = {name: event[name] for name in (schema.RUN_ID, schema.THREAD_ID, schema.ATTEMPT, schema.GRAPH,
                                            schema.NODE, schema.STEP, schema.DURATION_MS)}
    error[schema.PHASE] = schema.ERROR
    error[schema.EXCEPTION] = exception_document(exc)
    run.trace.emit(error)


def flush(run: RunContext) -> None:
    """Write, without a route, any end a router never completed (the run is finishing)."""
    if run.trace is None:
        return
    while run.held:
        _task, held = run.held.popitem()
        run.trace.append(held.event)
