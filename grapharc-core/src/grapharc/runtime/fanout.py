"""Bounded fan-out with failure isolation, on LangGraph's Send.

``GraphARC.add_fanout(name, worker, after=, over=, into=, then=, timeout=)`` adds a
worker node and a router after ``after`` that sends one ``(index, item)`` payload per
item of ``over(state)`` (the router reads a private copy of the state, so the items are
the worker's own and are not copied again). Each worker execution is an ordinary
governed node execution (its own iteration, trace events and token scope, so a worker
is charged only its own model calls), and LangGraph runs them in one superstep under
the run's ``max_concurrency``. What makes it fail-isolated is the worker body: an exception is
recorded as a ``crashed`` outcome with its type, and a worker past ``timeout`` as
``timed_out``, instead of failing the superstep. Every outcome is appended to
``into`` (a reducer field), so ``then`` sees all of them, failures by cause.

A sync worker with a timeout runs on its own daemon thread (in a copy of the node's
context): a worker parked in a C call such as ``time.sleep`` cannot be unwound, so it
is abandoned at the timeout, sent an asynchronous exception that stops it when the
call returns, and its late result is discarded. Budget exhaustion, a missing run
context and interrupts are not isolated: they end the run as anywhere else.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable
from contextvars import copy_context
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from langgraph.errors import GraphBubbleUp
from langgraph.types import Send
from pydantic import BaseModel, ConfigDict

from grapharc.runtime.budget import BudgetExceededError
from grapharc.runtime.deadline import NodeTimeoutError, async_deadline, deadline
from grapharc.runtime.errors import MissingRunContextError

T = TypeVar("T")

_NOT_ISOLATED = (BudgetExceededError, MissingRunContextError, GraphBubbleUp)


class WorkerOutcome(BaseModel):
    """What one fan-out worker produced, or why it produced nothing."""

    model_config = ConfigDict(frozen=True)

    worker: str
    index: int
    item: Any = None
    status: Literal["ok", "crashed", "timed_out"]
    value: Any = None
    error_type: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True when the worker returned a value."""
        return self.status == "ok"


@dataclass(frozen=True, slots=True)
class FanOut:
    """A fan-out as declared: the worker node, what it maps over and where outcomes go."""

    name: str
    worker: Callable[[Any], Any]
    after: str
    over: Callable[[Any], Iterable[Any]]
    into: str
    then: str
    timeout: float | None
    is_async: bool

    def router(self, state: Any) -> list[Send] | str:
        """One Send per item; straight to ``then`` when there is nothing to map over."""
        sends = [Send(self.name, (index, item)) for index, item in enumerate(self.over(state))]
        return sends or self.then

    def outcome(self, index: int, item: Any, **fields: Any) -> dict[str, list[WorkerOutcome]]:
        """The write one worker execution makes: a single outcome appended to ``into``."""
        return {self.into: [WorkerOutcome(worker=self.name, index=index, item=item, **fields)]}

    def crashed(self, index: int, item: Any, exc: BaseException) -> dict[str, list[WorkerOutcome]]:
        """The outcome of a worker that raised."""
        return self.outcome(index, item, status="crashed", error_type=_qualified(exc), error=str(exc)[:500])

    def timed_out(self, index: int, item: Any) -> dict[str, list[WorkerOutcome]]:
        """The outcome of a worker that ran past its timeout."""
        return self.outcome(index, item, status="timed_out", error=f"no result within {self.timeout:g} s")

    def failed(self, index: int, item: Any, exc: Exception) -> dict[str, list[WorkerOutcome]]:
        """The outcome of a worker that raised ``exc``: timed out, or crashed. What a worker must
        not isolate (the run's budget, a missing run context, LangGraph's control flow) is raised."""
        if isinstance(exc, _NOT_ISOLATED):
            raise exc
        if isinstance(exc, NodeTimeoutError):
            return self.timed_out(index, item)
        return self.crashed(index, item, exc)

    def sync_body(self, payload: tuple[int, Any], config: Any) -> dict[str, Any]:
        """Run the worker on one item; exceptions and timeouts become outcomes."""
        index, item = payload
        try:
            if self.timeout is None:
                value = self.worker(item)
            else:
                finished, value = _run_with_timeout(self.worker, item, self.timeout, self.name)
                if not finished:
                    return self.timed_out(index, item)
        except Exception as exc:
            return self.failed(index, item, exc)
        return self.outcome(index, item, status="ok", value=value)

    async def async_body(self, payload: tuple[int, Any], config: Any) -> dict[str, Any]:
        """Async twin of ``sync_body``; the timeout cancels the worker's task."""
        index, item = payload
        try:
            async with async_deadline(self.timeout, node=self.name):
                value = await self.worker(item)
        except Exception as exc:
            return self.failed(index, item, exc)
        return self.outcome(index, item, status="ok", value=value)


def _run_with_timeout(worker: Callable[[Any], Any], item: Any, timeout: float, name: str) -> tuple[bool, Any]:
    """(finished, value) of ``worker(item)`` on a daemon thread given ``timeout`` seconds."""
    context = copy_context()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            with deadline(timeout, node=name):
                box["value"] = context.run(worker, item)
        except BaseException as exc:  # handed to the waiting node thread
            box["error"] = exc

    thread = threading.Thread(target=target, name=f"grapharc-worker-{name}", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return False, None
    if "error" in box:
        raise box["error"]
    return True, box.get("value")


def _qualified(exc: BaseException) -> str:
    cls = type(exc)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def dedupe(items: Iterable[T], key: Callable[[T], Hashable]) -> list[T]:
    """The items with repeated keys dropped, first occurrence kept, order preserved."""
    seen: set[Hashable] = set()
    unique: list[T] = []
    for item in items:
        marker = key(item)
        if marker not in seen:
            seen.add(marker)
            unique.append(item)
    return unique


def unique_sources(items: Iterable[T], key: Callable[[T], Hashable]) -> int:
    """How many distinct sources the items come from, however often each repeats."""
    return len({key(item) for item in items})


def split_outcomes(
    outcomes: Iterable[WorkerOutcome],
) -> tuple[list[WorkerOutcome], list[WorkerOutcome]]:
    """(succeeded, failed) outcomes, each in worker index order."""
    ordered = sorted(outcomes, key=lambda outcome: outcome.index)
    return [o for o in ordered if o.ok], [o for o in ordered if not o.ok]
