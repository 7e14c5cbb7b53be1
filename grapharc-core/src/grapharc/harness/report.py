"""What an agent run did, read back from its trace (the one record) and its final state.

Every tool call the model asked for is listed with the permission decision made about it
(``allow``, ``ask``, ``deny``; for an ask, its ``approval``: approved or refused), the rule and
reason, and what became of it (``ok``, ``error``, ``refused``, ``timeout``, ``replayed``, or None
when it never reached an executor). Spend is the
sum of the thread's ``run_end`` events, so a session's pauses and resumes add up.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from grapharc.trace import schema as ts
from grapharc.trace.reader import read_events

ANSWERED = "answered"


def thread_events(trace: str | os.PathLike[str], thread_id: str) -> list[dict[str, Any]]:
    """The events ``thread_id`` left on the trace at ``trace``, in order."""
    return [dict(event) for event in read_events(trace, thread_id=thread_id)]


def tool_calls(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per tool call: its permission decision, then its outcome if it ran."""
    calls: list[dict[str, Any]] = []
    open_calls: dict[tuple[str, str], dict[str, Any]] = {}
    for event in events:
        key = (str(event.get(ts.TOOL)), str(event.get(ts.CALL_ID)))
        if event.get(ts.PHASE) == ts.PERMISSION:
            record = {"tool": key[0], "call_id": key[1], "step": event.get(ts.STEP),
                      "decision": event.get(ts.DECISION), "approval": event.get(ts.APPROVAL),
                      "rule_id": event.get(ts.RULE_ID) or None,
                      "reason": event.get(ts.REASON), "outcome": None, "error": None}
            calls.append(record)
            open_calls[key] = record
        elif event.get(ts.PHASE) == ts.TOOL_CALL and key in open_calls:
            record = open_calls.pop(key)
            exception = event.get(ts.EXCEPTION) or {}
            record.update(outcome=event.get(ts.OUTCOME), executor=event.get(ts.EXECUTOR),
                          error=f"{exception.get(ts.EXCEPTION_TYPE)}: {exception.get(ts.EXCEPTION_MESSAGE)}"
                          if exception else None)
    return calls


def spend(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Tokens, dollars and node executions of every finished run in ``events``, and the model calls
    the dollars leave out (their provider reported no cost and no price was given)."""
    ends = [event for event in events if event.get(ts.PHASE) == ts.RUN_END]
    return {"tokens": sum(int(event.get(ts.TOKENS) or 0) for event in ends),
            "cost_usd": round(sum(float(event.get(ts.COST_USD) or 0.0) for event in ends), 6),
            "unpriced_calls": sum(int(event.get(ts.UNPRICED_CALLS) or 0) for event in ends),
            "iterations": sum(int(event.get(ts.ITERATIONS) or 0) for event in ends),
            "runs": len(ends)}


def agent_document(values: dict[str, Any], events: list[dict[str, Any]], *, thread: str,
                   status: str | None = None) -> dict[str, Any]:
    """The result of an agent run: ``ok`` only when it answered (and is not waiting on anyone)."""
    stop_reason = values.get("stop_reason")
    return {"ok": stop_reason == ANSWERED and status in (None, "completed"),
            "status": status or values.get("status"), "answer": values.get("answer") or "",
            "stop_reason": stop_reason, "steps": int(values.get("steps") or 0),
            "tool_calls": tool_calls(events), "spend": spend(events), "thread": thread}
