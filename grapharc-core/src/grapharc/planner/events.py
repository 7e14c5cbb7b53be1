"""Governance events on the kernel's trace: ``{"event": "admission", "phase": "admission", ...}``.

Never ``end``: readers count node executions and sum node spend from ``end``
events, so a planning round or a decision must not look like one. A round's
planner tokens, iterations and duration go in its ``delta`` as ``round_tokens``,
``round_iterations`` and ``round_duration_ms``, where no reader sums them.
The loop's id is the events' ``run_id``, and the planner's own spend is on the
``plan`` event as top-level ``tokens``: work outside any node, counted once.
"""

from __future__ import annotations

from typing import Any

from grapharc.runtime.trace import TraceWriter

EVENT = "admission"


def emit(trace: TraceWriter | None, step: str, loop_id: str, **fields: Any) -> None:
    """Write one governance event (``step``: plan, decision, round or stop) if tracing."""
    if trace is not None:
        trace.event(EVENT, phase="admission", step=step, run_id=loop_id, thread_id=loop_id,
                    loop_id=loop_id, **fields)
