"""OpenTelemetry export of a trace: one root span per run, one child per node execution.

Every other event becomes something on those spans: an error closes its node span with an
error status; a sub-step (an agent's model or tool call: an event that is neither a node's
start nor its end) becomes a span of its own, parented by inference to the open execution
of the node it names (same attempt, graph, node and step; else the latest open execution of
that node) and, when no such parent can be identified, to the run span rather than a guess;
admission events become span events on the run span.

OpenTelemetry is confined behind the ``SpanSink`` protocol: this module and
``grapharc.observe`` import without it, and only ``OpenTelemetrySink`` needs the ``otel``
extra (``grapharc-core[otel]``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from grapharc._missing import install_hint
from grapharc.observe import events as ev
from grapharc.observe.errors import OTelUnavailableError
from grapharc.trace import schema as ts
from grapharc.trace.reader import TraceReader

AttributeValue = str | bool | int | float


class SpanHandle(Protocol):
    """A started span: what the exporter does to it after starting it."""

    def set_attributes(self, attributes: Mapping[str, AttributeValue]) -> None:
        """Add attributes."""

    def set_error(self, description: str) -> None:
        """Mark the span as failed."""

    def add_event(self, name: str, attributes: Mapping[str, AttributeValue],
                  timestamp_ns: int | None) -> None:
        """Record a point-in-time event on the span."""

    def end(self, end_time_ns: int | None) -> None:
        """Finish the span."""


class SpanSink(Protocol):
    """Where spans go: ``OpenTelemetrySink``, or anything else with this shape."""

    def start_span(self, name: str, *, parent: SpanHandle | None, start_time_ns: int | None,
                   attributes: Mapping[str, AttributeValue]) -> SpanHandle:
        """Start a span (a root span when ``parent`` is None)."""
        ...


class OpenTelemetrySink:
    """A ``SpanSink`` over an OpenTelemetry tracer (the global provider's if none is given)."""

    def __init__(self, tracer: Any = None) -> None:
        try:
            from opentelemetry import trace
        except ImportError:
            raise OTelUnavailableError(
                "OpenTelemetry export needs opentelemetry-sdk, which is not installed",
                hint=install_hint("grapharc-core", extra="otel")) from None
        self._trace = trace
        self._tracer = tracer if tracer is not None else trace.get_tracer("grapharc.observe")

    def start_span(self, name: str, *, parent: SpanHandle | None, start_time_ns: int | None,
                   attributes: Mapping[str, AttributeValue]) -> SpanHandle:
        """Start an OpenTelemetry span under ``parent`` (an explicit root when None)."""
        if isinstance(parent, _OTelSpan):
            context = self._trace.set_span_in_context(parent.span)
        else:
            from opentelemetry.context import Context

            context = Context()
        span = self._tracer.start_span(name, context=context, start_time=start_time_ns,
                                       attributes=dict(attributes))
        return _OTelSpan(span)


class _OTelSpan:
    """A ``SpanHandle`` around an OpenTelemetry span."""

    def __init__(self, span: Any) -> None:
        self.span = span

    def set_attributes(self, attributes: Mapping[str, AttributeValue]) -> None:
        self.span.set_attributes(dict(attributes))

    def set_error(self, description: str) -> None:
        from opentelemetry.trace import Status, StatusCode

        self.span.set_status(Status(StatusCode.ERROR, description))

    def add_event(self, name: str, attributes: Mapping[str, AttributeValue],
                  timestamp_ns: int | None) -> None:
        self.span.add_event(name, dict(attributes), timestamp=timestamp_ns)

    def end(self, end_time_ns: int | None) -> None:
        self.span.end(end_time=end_time_ns)


@dataclass
class ExportReport:
    """How many runs and spans were exported, and how many sub-steps fell back to the run span."""

    runs: int = 0
    node_spans: int = 0
    substep_spans: int = 0
    parented_to_run: int = 0
    warnings: list[str] = field(default_factory=list)


@dataclass
class _RunSpans:
    root: SpanHandle
    last_ns: int | None
    ended: bool = False
    open: dict[tuple[Any, ...], list[SpanHandle]] = field(default_factory=dict)
    latest: dict[Any, list[SpanHandle]] = field(default_factory=dict)


_SKIPPED_FIELDS = frozenset({ts.PHASE, ts.TS, ts.STATE_DELTA, ts.EXCEPTION, ts.LABELS, ts.ROUTE})
_FAILED_STATUSES = frozenset({ts.FAILED_RUN, ts.BUDGET_EXCEEDED})
"""The ``run_end`` statuses (as the kernel writes them) that mark the run span as an error."""


def _nanos(ts: Any) -> int | None:
    value = ev.seconds(ts)
    return None if value is None else int(value * 1e9)


def _attributes(event: dict[str, Any]) -> dict[str, AttributeValue]:
    """An event's scalar fields as ``grapharc.*`` attributes (labels as ``grapharc.label.*``)."""
    attributes: dict[str, AttributeValue] = {}
    for key, value in event.items():
        if key not in _SKIPPED_FIELDS and isinstance(value, str | bool | int | float):
            attributes[f"grapharc.{key}"] = value
    labels = event.get(ts.LABELS)
    if isinstance(labels, dict):
        for key, value in labels.items():
            attributes[f"grapharc.label.{key}"] = str(value)
    delta = event.get(ts.STATE_DELTA)
    if isinstance(delta, dict) and delta:
        attributes["grapharc.writes"] = ",".join(map(str, delta))
    return attributes


class _Exporter:
    """Turns a run's events into spans on a sink as they stream past."""

    def __init__(self, sink: SpanSink, report: ExportReport) -> None:
        self.sink = sink
        self.report = report
        self.runs: dict[Any, _RunSpans] = {}

    def add(self, event: dict[str, Any]) -> None:
        run = self._run(event)
        when = _nanos(event.get(ts.TS))
        if when is not None:
            run.last_ns = when
        phase = event.get(ts.PHASE)
        node = event.get(ts.NODE)
        if phase == ts.ADMISSION:
            run.root.add_event(f"admission.{event.get(ts.ACTION)}", _attributes(event), when)
        elif phase == ts.RUN_START:
            run.root.set_attributes(_attributes(event))
        elif phase == ts.RUN_END:
            self._end_run(run, event, when)
        elif node is not None and phase == ts.START:
            self._start_node(run, event, node, when)
        elif node is not None and phase in ts.CLOSING_PHASES:
            self._close_node(run, event, node, phase, when)
        else:
            self._substep(run, event, node, when)

    def _run(self, event: dict[str, Any]) -> _RunSpans:
        run_id = event.get(ts.RUN_ID)
        run = self.runs.get(run_id)
        if run is None:
            when = _nanos(event.get(ts.TS))
            attributes = {key: value for key, value in _attributes(event).items()
                          if key in _RUN_ATTRIBUTES or key.startswith("grapharc.label.")}
            root = self.sink.start_span(f"run {event.get(ts.GRAPH) or run_id}", parent=None,
                                        start_time_ns=when, attributes=attributes)
            run = self.runs[run_id] = _RunSpans(root, when)
            self.report.runs += 1
        return run

    def _start_node(self, run: _RunSpans, event: dict[str, Any], node: str, when: int | None) -> None:
        span = self.sink.start_span(f"node {node}", parent=run.root, start_time_ns=when,
                                    attributes=_attributes(event))
        run.open.setdefault(ev.execution_key(event), []).append(span)
        run.latest.setdefault((event.get(ts.ATTEMPT), event.get(ts.GRAPH), node), []).append(span)
        self.report.node_spans += 1

    def _close_node(self, run: _RunSpans, event: dict[str, Any], node: str, phase: str,
                    when: int | None) -> None:
        spans = run.open.get(ev.execution_key(event))
        if not spans:  # a closing event whose start is not in the trace: a span of its duration
            self._start_node(run, event, node, _nanos(_start_of(event)))
            spans = run.open[ev.execution_key(event)]
        span = spans.pop(0)
        if not spans:
            del run.open[ev.execution_key(event)]
        run.latest[(event.get(ts.ATTEMPT), event.get(ts.GRAPH), node)].remove(span)
        span.set_attributes(_attributes(event))
        if phase == ts.ERROR:
            document = event.get(ts.EXCEPTION)
            exception = document if isinstance(document, dict) else {}
            kind = str(exception.get(ts.EXCEPTION_TYPE, ""))
            message = str(exception.get(ts.EXCEPTION_MESSAGE, ""))
            span.set_attributes({"grapharc.exception.type": kind, "grapharc.exception.message": message})
            span.set_error(f"{kind or 'error'}: {message}")
        span.end(when)

    def _substep(self, run: _RunSpans, event: dict[str, Any], node: Any, when: int | None) -> None:
        parent = None
        if node is not None:
            exact = run.open.get(ev.execution_key(event))
            latest = run.latest.get((event.get(ts.ATTEMPT), event.get(ts.GRAPH), node))
            parent = exact[-1] if exact else (latest[-1] if latest else None)
        if parent is None:
            parent = run.root
            self.report.parented_to_run += 1
        span = self.sink.start_span(str(event.get(ts.PHASE)), parent=parent,
                                    start_time_ns=_nanos(_start_of(event)), attributes=_attributes(event))
        span.end(when)
        self.report.substep_spans += 1

    def _end_run(self, run: _RunSpans, event: dict[str, Any], when: int | None) -> None:
        run.root.set_attributes(_attributes(event))
        if event.get(ts.STATUS) in _FAILED_STATUSES:
            run.root.set_error(f"run ended {event.get(ts.STATUS)}: {event.get(ts.STOP_REASON)}")
        self._close_open(run, when)
        run.root.end(when)
        run.ended = True

    def _close_open(self, run: _RunSpans, when: int | None) -> None:
        """End node spans that never got a closing event (the process died, or still running)."""
        for spans in run.open.values():
            for span in spans:
                span.set_error("the node has no end or error event in the trace")
                span.end(when)
        run.open.clear()
        run.latest.clear()

    def finish(self) -> None:
        for run in self.runs.values():
            if not run.ended:
                self._close_open(run, run.last_ns)
                run.root.end(run.last_ns)


_RUN_ATTRIBUTES = frozenset(f"grapharc.{name}" for name in (ts.RUN_ID, ts.THREAD_ID, ts.ATTEMPT, ts.GRAPH,
                                                             ts.TENANT))


def _start_of(event: dict[str, Any]) -> Any:
    """When an event's work began: its ``ts`` less its ``duration_ms`` (the writer stamps the end)."""
    when, duration = ev.seconds(event.get(ts.TS)), event.get(ts.DURATION_MS)
    if when is None or not isinstance(duration, int | float):
        return event.get(ts.TS)
    return when - duration / 1000.0


def export_spans(path: str | os.PathLike[str], sink: SpanSink | None = None, *,
                 run_id: str | None = None) -> ExportReport:
    """Export the runs in the trace at ``path`` (or only ``run_id``) as spans on ``sink``.

    Without a sink, spans go to OpenTelemetry's global tracer provider.
    """
    report = ExportReport()
    exporter = _Exporter(sink if sink is not None else OpenTelemetrySink(), report)
    reader = TraceReader(path, run_id=run_id)
    for event in reader:
        exporter.add(event)
    exporter.finish()
    report.warnings = reader.warnings()
    return report
