"""The JSONL trace writer: the one record that metrics, replay, diff, cost and every view read.

``TraceWriter`` encodes events (:mod:`grapharc.trace.encoding`) and hands the lines to a sink:
a JSONL file (:mod:`grapharc.trace.sinks`), or the sink of the ``traces`` store a URI names
(:mod:`grapharc.trace.store`), each holding the same bytes per event. Every secret configured
when the writer opens (and every one registered later) is redacted from every line
(:mod:`grapharc.redaction`).
"""

from __future__ import annotations

import os
import time
from types import TracebackType
from typing import Any

from grapharc.redaction import Redactor, current_redactor
from grapharc.trace import schema
from grapharc.trace.encoding import encode_event
from grapharc.trace.errors import TraceFieldError
from grapharc.trace.sinks import TraceSink
from grapharc.trace.store import open_traces

NANOSECOND_DIGITS = 6
"""Decimals of a millisecond figure that are whole nanoseconds."""


class TraceWriter:
    """Encodes events as trace lines and hands them to a sink: a JSONL file (a bare path), or the
    sink a ``traces`` store URI names (``postgresql://HOST/DB``); safe to share between threads."""

    def __init__(self, target: str | os.PathLike[str] | TraceSink, *,
                 redactor: Redactor | None = None) -> None:
        self.sink = open_trace_sink(target) if isinstance(target, str | os.PathLike) else target
        self.redactor = redactor if redactor is not None else current_redactor()

    def start(self, run_id: str, thread_id: str, attempt: int, graph: str, node: str, step: int, *,
              extra: dict[str, Any] | None = None) -> None:
        """Write a node's ``start`` event: the identity of the step and nothing else."""
        self.write(node_identity(schema.START, run_id, thread_id, attempt, graph, node, step), extra)

    def end(self, run_id: str, thread_id: str, attempt: int, graph: str, node: str, step: int, *,
            state_delta: dict[str, Any], duration_ms: float, tokens: int, cost_usd: float | None,
            extra: dict[str, Any] | None = None) -> None:
        """Write a node's ``end`` event: its identity plus state delta, duration and spend."""
        event = node_identity(schema.END, run_id, thread_id, attempt, graph, node, step)
        self.write(end_fields(event, state_delta, duration_ms, tokens, cost_usd), extra)

    def error(self, run_id: str, thread_id: str, attempt: int, graph: str, node: str, step: int, *,
              duration_ms: float, exception: BaseException, extra: dict[str, Any] | None = None) -> None:
        """Write a node's ``error`` event: its identity plus duration and the exception."""
        event = node_identity(schema.ERROR, run_id, thread_id, attempt, graph, node, step)
        event[schema.DURATION_MS] = milliseconds(duration_ms)
        event[schema.EXCEPTION] = exception_document(exception)
        self.write(event, extra)

    def paused(self, phase: str, run_id: str, thread_id: str, attempt: int, graph: str, node: str,
               step: int, *, duration_ms: float) -> None:
        """Write an ``interrupt`` or ``parent_command`` event: a node that stopped without ending."""
        event = node_identity(phase, run_id, thread_id, attempt, graph, node, step)
        event[schema.DURATION_MS] = milliseconds(duration_ms)
        self.write(event)

    def emit(self, event: dict[str, Any]) -> None:
        """Write a run-level event (``run_start``, ``run_end``, ``admission``...); ``ts`` is added
        if absent. The event must name its phase."""
        if schema.PHASE not in event:
            raise TraceFieldError(f"a trace event must carry {schema.PHASE!r}; got fields {sorted(event)}")
        event.setdefault(schema.TS, time.time())
        self.append(event)

    def append(self, event: dict[str, Any]) -> None:
        """Encode ``event`` as one line and append it with a single write."""
        self.sink.write((event,), (encode_event(event, self._redactor()),))

    def append_many(self, events: list[dict[str, Any]]) -> None:
        """Append several events, in order, with a single write."""
        if events:
            redactor = self._redactor()
            self.sink.write(events, [encode_event(event, redactor) for event in events])

    def close(self) -> None:
        """Close the sink; further writes raise TraceClosedError. Closing twice is harmless."""
        self.sink.close()

    def _redactor(self) -> Redactor | None:
        """The redactor for the next line, None when no secret is configured (the fast path)."""
        self.redactor = self.redactor.refreshed()
        return self.redactor or None

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def write(self, event: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
        """Append a node event built by ``node_identity``, with ``extra`` fields that must not
        overwrite its own."""
        if extra:
            clashes = event.keys() & extra.keys()
            if clashes:
                raise TraceFieldError(
                    f"extra field(s) {sorted(clashes)} would overwrite the {event[schema.PHASE]!r} "
                    "event's own fields",
                    hint="rename the extra field",
                )
            event.update(extra)
        self.append(event)


def open_trace_sink(location: str | os.PathLike[str]) -> TraceSink:
    """The sink ``location`` names: a ``traces`` store URI (``file:``, ``postgresql://``...),
    else a JSONL file at that path."""
    return open_traces(location).open_sink()


def node_identity(phase: str, run_id: str, thread_id: str, attempt: int, graph: str, node: str,
                  step: int) -> dict[str, Any]:
    """The fields every node event starts with: which step of which run, and when."""
    return {schema.PHASE: phase, schema.RUN_ID: run_id, schema.THREAD_ID: thread_id,
            schema.ATTEMPT: attempt, schema.GRAPH: graph, schema.NODE: node, schema.STEP: step,
            schema.TS: time.time()}


def end_fields(event: dict[str, Any], state_delta: dict[str, Any], duration_ms: float, tokens: int,
               cost_usd: float | None) -> dict[str, Any]:
    """``event`` (a node identity) completed as an ``end``: the delta that landed and the spend."""
    event[schema.STATE_DELTA] = state_delta
    event[schema.DURATION_MS] = milliseconds(duration_ms)
    event[schema.TOKENS] = tokens
    event[schema.COST_USD] = cost_usd
    return event


def milliseconds(duration_ms: float) -> float:
    """A duration as the trace records it: whole nanoseconds, the resolution ``perf_counter``
    measures in; the digits past them are float noise that cost ten bytes a line."""
    return round(duration_ms, NANOSECOND_DIGITS)


def exception_document(exception: BaseException) -> dict[str, str]:
    """An exception as the trace records it: its qualified type name and its message."""
    return {schema.EXCEPTION_TYPE: _qualified_name(type(exception)),
            schema.EXCEPTION_MESSAGE: str(exception)}


def _qualified_name(cls: type) -> str:
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"
