"""Streaming aggregates of a run, a thread or a group: the one place attribution is decided.

``metrics``, ``cost``, ``diff`` and the thread summary all fold events through ``Tally``, so
they cannot disagree on a total. The rules:

* node executions are counted from ``start`` events of a named node (from its closing
  events where a start is missing); admission-phase events (admission decisions, planning
  rounds) are counted apart and never as executions;
* tokens and provider cost come from each event's own top-level ``tokens`` / ``cost_usd``,
  counted once: a node's closing event (``end``, or ``error`` if it carries any) charges that
  node, and its figure is the node's own usage scope, so fan-out siblings are never credited
  with each other's spend; an event with no node (an agent's model call, a planner's plan)
  or in the admission phase charges the run *outside any node*; an event that names a node
  but does not close it (a sub-step inside the node span) charges nothing, because the
  node's closing event already includes it;
* ``run_start`` / ``run_end`` figures and anything inside a ``state_delta`` (a planning
  round's ``round_tokens``) are never summed.

Memory is per node and per distinct failure, never per event.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from grapharc.observe import events as ev
from grapharc.trace import schema as ts

Pricer = Callable[[str | None, int, int | None, int | None], float | None]
"""Estimate the USD price of (model, total, input, output) tokens, or None if it has no rate."""


@dataclass(slots=True)
class ModelUsage:
    """The calls and tokens of one model in a bucket, and what a rate card made of them."""

    calls: int = 0
    tokens: int = 0
    estimated_cost_usd: float = 0.0
    unpriced_tokens: int = 0

    def merge(self, other: ModelUsage) -> None:
        """Add ``other``'s figures into this one."""
        self.calls += other.calls
        self.tokens += other.tokens
        self.estimated_cost_usd += other.estimated_cost_usd
        self.unpriced_tokens += other.unpriced_tokens


@dataclass(slots=True)
class Usage:
    """Tokens and cost charged to one bucket; provider-recorded and estimated kept apart.

    ``models`` splits the tokens by the model that spent them (None: no model named), each share
    priced at its own model's rate.
    """

    events: int = 0
    tokens: int = 0
    recorded_cost_usd: float = 0.0
    recorded_events: int = 0
    unrecorded_tokens: int = 0
    estimated_cost_usd: float = 0.0
    unpriced_tokens: int = 0
    models: dict[str | None, ModelUsage] = field(default_factory=dict)

    def charge(self, event: dict[str, Any], price: Pricer | None) -> None:
        """Add an event's own tokens and ``cost_usd`` (and a rate-card estimate per model if priced)."""
        total, input_tokens, output_tokens = ev.token_figures(event)
        cost = ev.recorded_cost(event)
        self.events += 1
        self.tokens += total
        if cost is None:
            self.unrecorded_tokens += total
        else:
            self.recorded_cost_usd += cost
            self.recorded_events += 1
        for model, calls, tokens, split_in, split_out in ev.model_shares(event, total, input_tokens,
                                                                         output_tokens):
            share = self.models.get(model)
            if share is None:
                share = self.models[model] = ModelUsage()
            share.calls += calls
            share.tokens += tokens
            if price is None:
                continue
            estimate = price(model, tokens, split_in, split_out)
            if estimate is None:
                share.unpriced_tokens += tokens
                self.unpriced_tokens += tokens
            else:
                share.estimated_cost_usd += estimate
                self.estimated_cost_usd += estimate

    def merge(self, other: Usage) -> None:
        """Add ``other``'s figures into this one, model by model."""
        for name in _FIGURES:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for model, share in other.models.items():
            mine = self.models.get(model)
            if mine is None:
                mine = self.models[model] = ModelUsage()
            mine.merge(share)


_FIGURES = tuple(figure.name for figure in fields(Usage) if figure.name != "models")
"""The summed figures of a ``Usage``: every field but its per-model split."""


@dataclass(slots=True)
class NodeStats:
    """How often one node ran, how it ended, how long it took and what it spent."""

    started: int = 0
    completed: int = 0
    failed: int = 0
    interrupted: int = 0
    duration_ms: float = 0.0
    max_duration_ms: float = 0.0
    usage: Usage = field(default_factory=Usage)

    @property
    def closed(self) -> int:
        """Executions that ended: completed, failed or interrupted."""
        return self.completed + self.failed + self.interrupted

    @property
    def executions(self) -> int:
        """Executions of the node: its starts (or its closings, where a start is missing)."""
        return max(self.started, self.closed)

    def timed(self, event: dict[str, Any]) -> None:
        """Add a closing event's ``duration_ms``."""
        duration = event.get(ts.DURATION_MS)
        if isinstance(duration, int | float):
            self.duration_ms += duration
            if duration > self.max_duration_ms:
                self.max_duration_ms = duration


@dataclass(slots=True)
class Failure:
    """One kind of failure of one node: how often, and where it first happened."""

    node: str
    exception_type: str
    count: int
    first_message: str
    first_attempt: Any
    first_step: Any


_METER_FIELDS = (ts.ITERATIONS, ts.TOKENS, ts.COST_USD, ts.UNPRICED_CALLS, ts.DURATION_MS)
"""What ``run_end`` reports from the run's own budget meter: shown for cross-checking, never summed."""


class Tally:
    """The aggregate of every event fed to it (a run's, a thread's or a group's)."""

    def __init__(self, price: Pricer | None = None) -> None:
        self.price = price
        self.run_ids: dict[str, None] = {}
        self.thread_id: str | None = None
        self.graph: str | None = None
        self.tenant: str | None = None
        self.labels: dict[str, str] = {}
        self.attempts: set[Any] = set()
        self.status: str | None = None
        self.stop_reason: Any = None
        self.meter: dict[str, Any] | None = None
        self.first_ts: Any = None
        self.last_ts: Any = None
        self.events = 0
        self.nodes: dict[str, NodeStats] = {}
        self.outside = Usage()
        self.outside_kinds: dict[str, int] = {}
        self.substeps = 0
        self.admission_events = 0
        self.retries = 0
        self.failures: dict[tuple[str, str], Failure] = {}
        self._errored: set[tuple[Any, ...]] = set()

    def add(self, event: dict[str, Any]) -> None:
        """Fold one event in."""
        self.events += 1
        when = event.get(ts.TS)
        if self.first_ts is None:
            self.first_ts = when
        self.last_ts = when
        run_id = event.get(ts.RUN_ID)
        if run_id not in self.run_ids:
            self._identify(event)
        self.attempts.add(event.get(ts.ATTEMPT))
        phase = event.get(ts.PHASE)
        node = event.get(ts.NODE)
        if phase == ts.ADMISSION:
            self.admission_events += 1
            self._charge_outside(phase, event)
        elif phase == ts.START and node is not None:
            self._start(node, event)
        elif phase == ts.END and node is not None:
            stats = self._node(node)
            stats.completed += 1
            stats.timed(event)
            stats.usage.charge(event, self.price)
        elif phase == ts.ERROR and node is not None:
            self._error(node, event)
        elif (phase == ts.INTERRUPT or phase == ts.PARENT_COMMAND) and node is not None:
            stats = self._node(node)
            stats.interrupted += 1
            stats.timed(event)
        elif phase == ts.RUN_START:
            self._identify(event)
        elif phase == ts.RUN_END:
            self.status = event.get(ts.STATUS)
            self.stop_reason = event.get(ts.STOP_REASON)
            self.meter = {key: event.get(key) for key in _METER_FIELDS if key in event}
        elif node is None:
            self._charge_outside(phase, event)
        else:
            self.substeps += 1

    @property
    def shown_status(self) -> str:
        """The status readers report: ``run_end``'s; else ``not executed`` when only admission
        events were recorded (a refused or check-only graph), else ``incomplete``."""
        if self.status is not None:
            return str(self.status)
        return "not executed" if self.events == self.admission_events else "incomplete"

    def _identify(self, event: dict[str, Any]) -> None:
        """Record run id, thread, graph, tenant and labels the first time they appear."""
        run_id = event.get(ts.RUN_ID)
        if run_id is not None:
            self.run_ids.setdefault(run_id, None)
        if self.thread_id is None:
            self.thread_id = event.get(ts.THREAD_ID)
        if self.graph is None:
            self.graph = event.get(ts.GRAPH)
        if self.tenant is None:
            self.tenant = event.get(ts.TENANT)
        labels = event.get(ts.LABELS)
        if isinstance(labels, dict):
            for key, value in labels.items():
                self.labels.setdefault(key, value)

    def _node(self, node: str) -> NodeStats:
        stats = self.nodes.get(node)
        if stats is None:
            stats = self.nodes[node] = NodeStats()
        return stats

    def _start(self, node: str, event: dict[str, Any]) -> None:
        self._node(node).started += 1
        if self._errored:
            key = ev.execution_key(event)
            if key in self._errored:
                self.retries += 1
                self._errored.discard(key)

    def _error(self, node: str, event: dict[str, Any]) -> None:
        stats = self._node(node)
        stats.failed += 1
        stats.timed(event)
        if event.get(ts.TOKENS) is not None or event.get(ts.COST_USD) is not None:
            stats.usage.charge(event, self.price)
        self._errored.add(ev.execution_key(event))
        exception = event.get(ts.EXCEPTION)
        exc_type = str(exception.get(ts.EXCEPTION_TYPE)) if isinstance(exception, dict) else "unknown"
        failure = self.failures.get((node, exc_type))
        if failure is None:
            message = str(exception.get(ts.EXCEPTION_MESSAGE, "")) if isinstance(exception, dict) else ""
            self.failures[(node, exc_type)] = Failure(node, exc_type, 1, message, event.get(ts.ATTEMPT),
                                                      event.get(ts.STEP))
        else:
            failure.count += 1

    def _charge_outside(self, phase: Any, event: dict[str, Any]) -> None:
        self.outside_kinds[phase] = self.outside_kinds.get(phase, 0) + 1
        if event.get(ts.TOKENS) is not None or event.get(ts.COST_USD) is not None:
            self.outside.charge(event, self.price)

    @property
    def node_usage(self) -> Usage:
        """The sum of every node's usage."""
        total = Usage()
        for stats in self.nodes.values():
            total.merge(stats.usage)
        return total

    @property
    def usage(self) -> Usage:
        """Everything charged: every node plus work outside any node."""
        total = self.node_usage
        total.merge(self.outside)
        return total

    @property
    def executions(self) -> int:
        """Node executions started (admission events never count)."""
        return sum(stats.executions for stats in self.nodes.values())

    @property
    def unfinished(self) -> int:
        """Node executions started with no closing event (still running, or the process died)."""
        return sum(stats.executions - stats.closed for stats in self.nodes.values())

    @property
    def wall_ms(self) -> float | None:
        """Milliseconds from the first event to the last, when both carry a timestamp."""
        first, last = ev.seconds(self.first_ts), ev.seconds(self.last_ts)
        if first is None or last is None:
            return None
        return (last - first) * 1000.0
