"""Governance events on the kernel's trace: ``phase="admission"``, with an ``action``.

Never ``end``: readers count node executions and sum node spend from ``end``
events, so a planning round or a decision must not look like one. A round's
planner tokens, iterations and duration go in its ``state_delta`` as ``round_tokens``,
``round_iterations`` and ``round_duration_ms``, where no reader sums them.
The loop's id is the events' ``run_id`` (their ``thread_id`` the loop's thread), and the
planner's own spend is on the ``plan`` event as top-level ``tokens``: work outside any node,
counted once.
Field names are those of :mod:`grapharc.trace.schema`, passed as keywords.
"""

from __future__ import annotations

from typing import Any

from grapharc.trace import schema as schema
from grapharc.trace.errors import TraceFieldError
from grapharc.trace.writer import TraceWriter


def emit(trace: TraceWriter | None, action: str, loop_id: str, thread_id: str | None = None,
         **fields: Any) -> None:
    """Write one governance event (``action``: plan, decision, round or stop) if tracing, on the
    thread ``thread_id`` (the loop's own id when it has none)."""
    if trace is None:
        return
    unknown = fields.keys() - schema.SHAPES[schema.ADMISSION].optional
    if unknown:
        raise TraceFieldError(f"admission event fields {sorted(unknown)} are not in the trace schema")
    trace.emit({schema.PHASE: schema.ADMISSION, schema.ACTION: action, schema.RUN_ID: loop_id,
                schema.THREAD_ID: thread_id or loop_id, schema.LOOP_ID: loop_id, **fields})
