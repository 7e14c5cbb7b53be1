"""``grapharc replay``: a run reconstructed from its trace, never re-executed.

It rebuilds the node sequence, the folded state, the timing and the failures from the
JSONL and calls no node, model or tool. Two limits come from the recording side and are
part of the result rather than a comment: strings over 2,000 characters were truncated
when written, so they replay truncated (``truncated_fields``); and the trace does not say
which fields have reducers, so a field LangGraph appended to folds last-write-wins unless
a reducer is passed (``reducers``). Steps are handed to ``on_step`` as they complete, so
memory holds the folded state and the run's per-node tallies, not the sequence.

A step's place in the sequence is the order its end (or error) was written; parallel
workers of one superstep appear in the order they finished. A routing node's step carries
its route: the key its router returned and the node(s) it sent the run to.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from grapharc.observe import events as ev
from grapharc.observe.errors import UnknownRunError
from grapharc.observe.fold import Reducer, StateFolder
from grapharc.observe.tally import Tally
from grapharc.trace import schema as ts
from grapharc.trace.reader import TraceReader


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One node execution as the trace recorded it."""

    index: int
    node: str
    graph: str | None
    step: Any
    attempt: Any
    status: str
    """``ok``, ``error``, ``interrupted`` (an interrupt or a command for the parent graph) or
    ``unfinished`` (started, never closed: still running, or the process died)."""
    started_at: float | None
    duration_ms: float | None
    tokens: int
    writes: list[str]
    exception: dict[str, Any] | None
    route: dict[str, Any] | None = None
    """``{"key": ..., "to": [...]}`` for a routing node: what its router returned and where it led."""

    def to_document(self) -> dict[str, Any]:
        """The step as a JSON-ready dict."""
        return {"index": self.index, "node": self.node, "graph": self.graph, "step": self.step,
                "attempt": self.attempt, "status": self.status, "started_at": self.started_at,
                "duration_ms": self.duration_ms, "tokens": self.tokens, "writes": self.writes,
                "exception": self.exception, "route": self.route}


@dataclass
class ReplayResult:
    """What a replay reconstructed besides the step sequence."""

    path: str
    run_id: str
    tally: Tally
    state: dict[str, Any]
    steps: int
    reducers: list[str]
    truncated_fields: list[str]
    opaque_fields: list[str]
    warnings: list[str] = field(default_factory=list)

    def to_document(self) -> dict[str, Any]:
        """The summary part of ``grapharc replay --json`` (the steps are streamed beside it)."""
        tally = self.tally
        nodes = tally.nodes.values()
        return {
            "ok": True, "path": self.path, "run_id": self.run_id, "thread_id": tally.thread_id,
            "graph": tally.graph, "attempts": sorted(a for a in tally.attempts if isinstance(a, int)),
            "status": tally.shown_status, "stop_reason": tally.stop_reason,
            "steps_total": self.steps,
            "failures": sum(s.failed for s in nodes),
            "unfinished": tally.unfinished,
            "tokens": tally.usage.tokens,
            "timing": {"nodes_ms": sum(s.duration_ms for s in nodes), "wall_ms": tally.wall_ms},
            "reducers": self.reducers,
            "truncated_fields": self.truncated_fields,
            "opaque_fields": self.opaque_fields,
            "state": self.state,
            **({"warnings": self.warnings} if self.warnings else {}),
        }


def replay(path: str | os.PathLike[str], run_id: str, *,
           reducers: Mapping[str, str | Reducer] | None = None,
           on_step: Callable[[ReplayStep], None] | None = None) -> ReplayResult:
    """Reconstruct ``run_id`` from the trace at ``path``; each step goes to ``on_step``."""
    folder = StateFolder(reducers)
    tally = Tally()
    reader = TraceReader(path, run_id=run_id)
    opened: dict[tuple[Any, ...], list[Any]] = {}  # start times of open executions, oldest first
    index = 0
    for event in reader:
        tally.add(event)
        phase = event.get(ts.PHASE)
        node = event.get(ts.NODE)
        if node is None or phase == ts.ADMISSION:
            continue
        if phase == ts.START:
            opened.setdefault(ev.execution_key(event), []).append(event.get(ts.TS))
        elif phase in ts.CLOSING_PHASES:
            started = _pop_oldest(opened, ev.execution_key(event))
            delta = event.get(ts.STATE_DELTA)
            if phase == ts.END:
                folder.apply(delta)
            index += 1
            if on_step is not None:
                on_step(_step(index, event, phase, started, delta))
    if not tally.events:
        raise UnknownRunError(reader.name, run_id)
    for (_run, attempt, graph, node, step), starts in opened.items():
        for started in starts:
            index += 1
            if on_step is not None:
                on_step(ReplayStep(index, node, graph, step, attempt, "unfinished", ev.seconds(started),
                                   None, 0, [], None))
    return ReplayResult(reader.name, run_id, tally, folder.state, index, sorted(folder.reducers),
                        folder.truncated_fields(), folder.opaque_fields(), reader.warnings())


def _pop_oldest(opened: dict[tuple[Any, ...], list[Any]], key: tuple[Any, ...]) -> Any:
    """The start time of the oldest open execution under ``key`` (fan-out workers share one)."""
    starts = opened.get(key)
    if not starts:
        return None
    started = starts.pop(0)
    if not starts:
        del opened[key]
    return started


_STATUS = {ts.END: "ok", ts.ERROR: "error", ts.INTERRUPT: "interrupted", ts.PARENT_COMMAND: "interrupted"}


def _step(index: int, event: dict[str, Any], phase: str, started: Any, delta: Any) -> ReplayStep:
    exception = event.get(ts.EXCEPTION)
    route = event.get(ts.ROUTE)
    tokens, _, _ = ev.token_figures(event)
    return ReplayStep(
        index=index, node=event[ts.NODE], graph=event.get(ts.GRAPH), step=event.get(ts.STEP),
        attempt=event.get(ts.ATTEMPT), status=_STATUS[phase], started_at=ev.seconds(started),
        duration_ms=event.get(ts.DURATION_MS), tokens=tokens,
        writes=list(delta) if isinstance(delta, dict) else [],
        exception=exception if isinstance(exception, dict) else None,
        route=route if isinstance(route, dict) else None,
    )
