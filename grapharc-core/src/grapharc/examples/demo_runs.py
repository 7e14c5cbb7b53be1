"""Reading a demo's run back from its trace: identity, how it ended, its node events.

A stage learns its run id here rather than from the kernel: ``invoke`` does not return it,
and the trace is the one record every other tool reads anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grapharc.errors import GraphARCError


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
    reason: str | None
    iterations: int
    tokens: int
    node_events: tuple[dict[str, Any], ...]

    def steps(self) -> list[int]:
        """Every step number this run's node events used, in order."""
        return sorted({event["step"] for event in self.node_events})

    def nodes_run(self) -> list[str]:
        """The nodes this run started, in trace order."""
        return [event["node"] for event in self.node_events if event["event"] == "start"]

    def first_error(self) -> dict[str, Any] | None:
        """This run's first node ``error`` event, if it had one."""
        return next((event for event in self.node_events if event["event"] == "error"), None)

    def identity(self) -> dict[str, Any]:
        """What a demo document reports so the trace tools can be pointed at the run."""
        return {"trace": str(self.trace), "run_id": self.run_id, "thread_id": self.thread_id,
                "attempt": self.attempt}


def thread_runs(trace: Path, thread_id: str) -> list[RunRecord]:
    """Every run of ``thread_id`` recorded in ``trace``, oldest attempt first."""
    from grapharc.observe import read_events

    runs: dict[str, dict[str, Any]] = {}
    for event in read_events(trace, thread_id=thread_id):
        run = runs.setdefault(event["run_id"], {"start": None, "end": None, "nodes": []})
        kind = event["event"]
        if kind == "run_start":
            run["start"] = event
        elif kind == "run_end":
            run["end"] = event
        elif kind in ("start", "end", "error"):
            run["nodes"].append(event)
    records = [_record(trace, thread_id, run_id, run) for run_id, run in runs.items()
               if run["start"] is not None]
    return sorted(records, key=lambda record: record.attempt)


def latest_run(trace: Path, thread_id: str) -> RunRecord:
    """The newest run of ``thread_id`` in ``trace``."""
    runs = thread_runs(trace, thread_id)
    if not runs:
        raise DemoTraceError(f"trace {trace} holds no run on thread {thread_id!r}",
                             hint="was the trace file moved or truncated while the demo ran?")
    return runs[-1]


def _record(trace: Path, thread_id: str, run_id: str, run: dict[str, Any]) -> RunRecord:
    end = run["end"] or {}
    return RunRecord(trace=trace, run_id=run_id, thread_id=thread_id,
                     attempt=int(run["start"]["attempt"]), status=end.get("status"),
                     reason=end.get("reason"), iterations=int(end.get("iterations") or 0),
                     tokens=int(end.get("tokens") or 0), node_events=tuple(run["nodes"]))
