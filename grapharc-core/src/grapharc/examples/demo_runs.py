"""A demo's run: what its compiled graph's ``last_run`` says, and its node events on the trace.

The kernel tells a stage which run it just made (``compiled.last_run``); the node events a
stage shows come from the trace, the one record every other tool reads too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grapharc.errors import GraphARCError
from grapharc.runtime.run_info import RunInfo
from grapharc.trace import schema as ts

NODE_PHASES = frozenset({ts.START, ts.END, ts.ERROR})


class DemoTraceError(GraphARCError):
    """A demo's run is missing from the trace it should have written."""


@dataclass(frozen=True)
class RunRecord:
    """One run as the trace recorded it: identity, how it ended, and its node events."""

    trace: Path
    run_id: str
    thread_id: str
    attempt: int
    status: str | None
    stop_reason: str | None
    iterations: int
    tokens: int
    node_events: tuple[dict[str, Any], ...]

    def steps(self) -> list[int]:
        """Every step number this run's node events used, in order."""
        return sorted({event[ts.STEP] for event in self.node_events})

    def nodes_run(self) -> list[str]:
        """The nodes this run started, in trace order."""
        return [event[ts.NODE] for event in self.node_events if event[ts.PHASE] == ts.START]

    def first_error(self) -> dict[str, Any] | None:
        """This run's first node ``error`` event, if it had one."""
        return next((event for event in self.node_events if event[ts.PHASE] == ts.ERROR), None)

    def identity(self) -> dict[str, Any]:
        """What a demo document reports so the trace tools can be pointed at the run."""
        return {"trace": str(self.trace), "run_id": self.run_id, "thread_id": self.thread_id,
                "attempt": self.attempt}


def run_record(trace: Path, info: RunInfo | None) -> RunRecord:
    """The run a stage just made (its graph's ``last_run``), with that run's node events."""
    from grapharc.observe import read_events

    if info is None:
        raise DemoTraceError("the demo's graph made no run", hint="this is a bug in the demo stage")
    events = tuple(event for event in read_events(trace, run_id=info.run_id)
                   if event[ts.PHASE] in NODE_PHASES)
    return RunRecord(trace=trace, run_id=info.run_id, thread_id=info.thread_id, attempt=info.attempt,
                     status=info.status, stop_reason=info.stop_reason, iterations=info.iterations,
                     tokens=info.tokens, node_events=events)


def thread_runs(trace: Path, thread_id: str) -> list[RunRecord]:
    """Every run of ``thread_id`` recorded in ``trace``, oldest attempt first (earlier attempts
    may have been made by processes that are gone, so the trace is where they are)."""
    from grapharc.observe import read_events

    runs: dict[str, dict[str, Any]] = {}
    for event in read_events(trace, thread_id=thread_id):
        run = runs.setdefault(event[ts.RUN_ID], {"start": None, "end": None, "nodes": []})
        phase = event[ts.PHASE]
        if phase == ts.RUN_START:
            run["start"] = event
        elif phase == ts.RUN_END:
            run["end"] = event
        elif phase in NODE_PHASES:
            run["nodes"].append(event)
    records = [_record(trace, thread_id, run_id, run) for run_id, run in runs.items()
               if run["start"] is not None]
    return sorted(records, key=lambda record: record.attempt)


def _record(trace: Path, thread_id: str, run_id: str, run: dict[str, Any]) -> RunRecord:
    end = run["end"] or {}
    return RunRecord(trace=trace, run_id=run_id, thread_id=thread_id,
                     attempt=int(run["start"][ts.ATTEMPT]), status=end.get(ts.STATUS),
                     stop_reason=end.get(ts.STOP_REASON), iterations=int(end.get(ts.ITERATIONS) or 0),
                     tokens=int(end.get(ts.TOKENS) or 0), node_events=tuple(run["nodes"]))
