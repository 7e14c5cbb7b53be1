"""Charge every model call a node makes to the run's meter, without the node's cooperation.

A LangChain configure hook puts the current node scope's callback handler on every callback
manager LangChain builds, so any chat model invoked in the node's context reports to it — also
inside library code that never sees the node's config. The scope lives in a ContextVar, so fan-out
workers (threads started through ``contextvars.copy_context`` and asyncio tasks) each report to
their own scope and are charged only their own calls.

Usage is read from each generation's ``AIMessage.usage_metadata`` (``total_tokens``, else input +
output), falling back to ``llm_output["token_usage"]`` (OpenAI's prompt/completion/total names).
Cached prompt tokens are part of ``input_tokens`` in LangChain's convention, and are charged at
full weight like any other input token. The provider's price comes from
``response_metadata["cost_usd"]`` or ``llm_output["cost_usd"]``; a call without one is unpriced.
A call is charged once, to the innermost node scope active where it ran (or, if it ran where no
scope is active but reached a scope's handler through inherited callbacks, to that scope); a run
reported twice under the same ``run_id`` is charged once. Each call is also counted under the
model that made it (:mod:`grapharc.models.labels` names it from the call's callback metadata), so
the node's ``end`` event can say which model spent what and a rate card can price it by model.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import OrderedDict
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult
from langchain_core.tracers.context import register_configure_hook

from grapharc.errors import GraphARCError
from grapharc.models.labels import call_label
from grapharc.runtime.budget import BudgetMeter, InvalidBudgetError
from grapharc.trace import schema

_CLAIMED_RUNS_KEPT = 4096
_CALLBACK_LOGGER = "langchain_core.callbacks.manager"


class _OwnRefusalFilter(logging.Filter):
    """Drop LangChain's "Error in _NodeUsageHandler..." warning: that error is re-raised (the
    handler's ``raise_error``) and reported by the run that it stops, so the warning only
    duplicates it on stderr."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.args, tuple) and record.args[:1] == ("_NodeUsageHandler",))


class NoUsageScopeError(GraphARCError):
    """Usage was charged by hand where no node scope is active, so no node could own it."""


@dataclass(slots=True)
class ModelCalls:
    """What one model's calls spent inside one node execution."""

    calls: int = 0
    tokens: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(slots=True)
class NodeUsage:
    """What one node execution spent; filled in live while the scope is open.

    ``cost_usd`` is the sum of reported prices, or None if no call reported one. ``models`` holds
    the calls whose model is known, by model name; calls of no known model are in the totals only.
    """

    tokens: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    calls: int = 0
    unpriced_calls: int = 0
    models: dict[str, ModelCalls] = field(default_factory=dict)


class _NodeUsageHandler(BaseCallbackHandler):
    """A node's usage scope and the callback handler LangChain reports that node's calls to."""

    raise_error = True
    run_inline = True

    def __init__(self, meter: BudgetMeter | None, node: str) -> None:
        self.meter = meter
        self.node = node
        self.usage = NodeUsage()
        self._token: Any = None
        self._models: dict[UUID, str] = {}

    def __enter__(self) -> NodeUsage:
        self._token = _ACTIVE_SCOPE.set(self)
        return self.usage

    def __exit__(self, *ended: object) -> None:
        """Close the scope, however the node ended."""
        _ACTIVE_SCOPE.reset(self._token)

    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID,
                            metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """Refuse to start a call once the run's tokens or dollars are already spent."""
        self._started(run_id, metadata)

    def on_llm_start(self, serialized: Any, prompts: Any, *, run_id: UUID,
                     metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """Refuse to start a call once the run's tokens or dollars are already spent."""
        self._started(run_id, metadata)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        """Charge the finished call to this node and the meter; raise if it crossed the ceiling."""
        model = self._models.pop(run_id, None)
        if not self._owns_event() or not _CLAIMED_RUNS.claim(run_id):
            return
        tokens, input_tokens, output_tokens, cost = _read_usage(response)
        self.charge(tokens, input_tokens, output_tokens, cost, model)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Forget the failed call's model name."""
        self._models.pop(run_id, None)

    def charge(self, tokens: int, input_tokens: int, output_tokens: int, cost: float | None,
               model: str | None = None) -> None:
        """Record one call on the node's usage (under ``model`` too, if known), then on the meter
        (which may raise)."""
        usage = self.usage
        with _CHARGE_LOCK:
            usage.calls += 1
            usage.tokens += tokens
            usage.input_tokens += input_tokens
            usage.output_tokens += output_tokens
            if cost is None:
                usage.unpriced_calls += 1
            else:
                usage.cost_usd = cost if usage.cost_usd is None else usage.cost_usd + cost
            if model is not None:
                calls = usage.models.get(model)
                if calls is None:
                    calls = usage.models[model] = ModelCalls()
                calls.calls += 1
                calls.tokens += tokens
                calls.input_tokens += input_tokens
                calls.output_tokens += output_tokens
        if self.meter is not None:
            self.meter.charge_tokens(tokens, cost, node=self.node)

    def _owns_event(self) -> bool:
        active = _ACTIVE_SCOPE.get()
        return active is self or active is None

    def _started(self, run_id: UUID, metadata: dict[str, Any] | None) -> None:
        """Refuse the call if the budget is spent; else remember which model it is."""
        if not self._owns_event():
            return
        if self.meter is not None:
            self.meter.check_call_allowed(node=self.node)
        model = call_label(metadata)
        if model is not None:
            self._models[run_id] = model


class _ClaimedRuns:
    """The run ids recently charged, so a call reported twice is charged once (bounded memory)."""

    def __init__(self, keep: int) -> None:
        self._keep = keep
        self._ids: OrderedDict[UUID, None] = OrderedDict()
        self._lock = threading.Lock()

    def claim(self, run_id: UUID) -> bool:
        """True the first time ``run_id`` is seen, False for a repeat."""
        with self._lock:
            if run_id in self._ids:
                return False
            self._ids[run_id] = None
            if len(self._ids) > self._keep:
                self._ids.popitem(last=False)
            return True


_ACTIVE_SCOPE: ContextVar[_NodeUsageHandler | None] = ContextVar("grapharc_node_scope", default=None)
_CHARGE_LOCK = threading.Lock()
"""Guards every scope's usage counters: one lock for all, as model calls are rare next to node
executions, which would otherwise each make a lock they almost never take."""
_CLAIMED_RUNS = _ClaimedRuns(_CLAIMED_RUNS_KEPT)
register_configure_hook(_ACTIVE_SCOPE, inheritable=True)
logging.getLogger(_CALLBACK_LOGGER).addFilter(_OwnRefusalFilter())


def node_usage_scope(meter: BudgetMeter | None, node: str) -> AbstractContextManager[NodeUsage]:
    """Open ``node``'s usage scope: ``with node_usage_scope(meter, "n") as usage: ...``.

    Every model call inside is added to ``usage`` and charged to ``meter`` (None: only recorded).
    """
    return _NodeUsageHandler(meter, node)


def model_fields(usage: NodeUsage) -> dict[str, Any]:
    """The fields a node's ``end`` event adds for its model calls: the input and output tokens (when
    the providers split all of them) and, per model named, its calls and tokens (none: no calls)."""
    if not usage.calls:
        return {}
    fields: dict[str, Any] = _split(usage.tokens, usage.input_tokens, usage.output_tokens)
    if usage.models:
        fields[schema.MODELS] = {
            name: {schema.CALLS: calls.calls, schema.TOKENS: calls.tokens,
                   **_split(calls.tokens, calls.input_tokens, calls.output_tokens)}
            for name, calls in usage.models.items()}
    return fields


def _split(tokens: int, input_tokens: int, output_tokens: int) -> dict[str, int]:
    """Input and output tokens, only when they account for every token (a provider that reported a
    total alone leaves them unsplit, so a rate card prices them at its blended rate)."""
    if tokens and input_tokens + output_tokens == tokens:
        return {schema.INPUT_TOKENS: input_tokens, schema.OUTPUT_TOKENS: output_tokens}
    return {}


def charge_hand(tokens: int, cost_usd: float | None = None, *, model: str | None = None) -> None:
    """Charge usage the callback never saw (a raw HTTP call, a sub-agent) to the current node.

    It counts as one call (of ``model``, if named); a missing cost counts it as unpriced. Raises
    BudgetExceededError if it crosses the ceiling.
    """
    scope = _ACTIVE_SCOPE.get()
    if scope is None:
        raise NoUsageScopeError(
            f"charge_hand({tokens!r}) was called outside any node, so no node can own the usage",
            hint="call it from inside a node, or charge the run's BudgetMeter directly",
        )
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
        raise InvalidBudgetError("charge_hand tokens", tokens, "a non-negative integer")
    scope.charge(tokens, 0, 0, reported_cost(cost_usd, strict=True), model)


def _read_usage(response: LLMResult) -> tuple[int, int, int, float | None]:
    """(total, input, output, cost) of one call; the first generation of each prompt carries the
    call's usage (with n > 1 choices every message repeats the same figures)."""
    total = input_tokens = output_tokens = 0
    cost: float | None = None
    found = False
    for generations in response.generations:
        if not generations:
            continue
        message = getattr(generations[0], "message", None)
        counted = message_tokens(message)
        if counted is not None:
            found = True
            call_total, call_input, call_output = counted
            total += call_total
            input_tokens += call_input
            output_tokens += call_output
        cost = _add_cost(cost, message_cost(message))
    llm_output = response.llm_output or {}
    if not found:
        token_usage = llm_output.get("token_usage") or {}
        input_tokens = _count(token_usage.get("prompt_tokens"))
        output_tokens = _count(token_usage.get("completion_tokens"))
        total = _count(token_usage.get("total_tokens")) or input_tokens + output_tokens
    if cost is None:
        cost = reported_cost(llm_output.get("cost_usd"))
    return total, input_tokens, output_tokens, cost


def message_tokens(message: Any) -> tuple[int, int, int] | None:
    """(total, input, output) tokens of one model reply from its ``usage_metadata``; None if it
    reports none."""
    usage = getattr(message, "usage_metadata", None)
    if not usage:
        return None
    input_tokens, output_tokens = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
    return _count(usage.get("total_tokens")) or input_tokens + output_tokens, input_tokens, output_tokens


def reply_spend(message: Any) -> dict[str, Any]:
    """The trace fields of one model reply's own spend: its tokens (split when the provider split
    them all) and the cost it reports; none when it reports no usage."""
    counted = message_tokens(message)
    if counted is None:
        return {}
    total, input_tokens, output_tokens = counted
    return {schema.TOKENS: total, **_split(total, input_tokens, output_tokens),
            schema.COST_USD: message_cost(message)}


def message_cost(message: Any) -> float | None:
    """The price in USD one model reply reports in ``response_metadata["cost_usd"]``, or None."""
    metadata = getattr(message, "response_metadata", None) or {}
    return reported_cost(metadata.get("cost_usd"))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def reported_cost(value: Any, *, strict: bool = False) -> float | None:
    """A provider-reported price in USD, or None; malformed prices are treated as unreported
    (``strict`` rejects them instead, for charges made by hand)."""
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
        return float(value)
    if strict:
        raise InvalidBudgetError("cost_usd", value, "a finite non-negative number or None")
    return None


def _add_cost(total: float | None, cost: float | None) -> float | None:
    if cost is None:
        return total
    return cost if total is None else total + cost
