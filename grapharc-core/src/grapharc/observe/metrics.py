"""``grapharc metrics``: tokens, retries, termination reason, per-node counts and durations.

One streaming pass; memory is per run and per node, never per event.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from grapharc.observe.errors import NoEventsError, UnknownRunError
from grapharc.observe.grouping import parse_grouping
from grapharc.observe.ledger import Ledger
from grapharc.observe.tally import Tally, Usage
from grapharc.trace.reader import TraceReader


@dataclass
class MetricsReport:
    """Metrics of one run (``run_id`` set) or of every run in a trace, with optional groups."""

    path: str
    run_id: str | None
    runs: dict[Any, Tally]
    groups: dict[str, Tally] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_document(self) -> dict[str, Any]:
        """The JSON document ``grapharc metrics --json`` prints."""
        document: dict[str, Any] = {"ok": True, "path": self.path}
        if self.run_id is not None:
            document.update(run_document(self.runs[self.run_id]))
        else:
            document["total"] = combined_document(list(self.runs.values()))
            document["runs"] = {run_id: run_document(tally) for run_id, tally in self.runs.items()
                                if run_id is not None}
            outside = self.runs.get(None)
            if outside is not None:  # events no run claims, such as a governed loop's decisions
                document["outside_runs"] = {**group_document(outside),
                                            "events": outside.events,
                                            "admission_events": outside.admission_events}
        if self.groups:
            document["groups"] = {key: group_document(tally) for key, tally in self.groups.items()}
        if self.warnings:
            document["warnings"] = self.warnings
        return document


def metrics(path: str | os.PathLike[str], run_id: str | None = None, *,
            by: str | None = None) -> MetricsReport:
    """Metrics of ``run_id`` in the trace at ``path`` (every run if None), grouped ``by``."""
    grouping = parse_grouping(by) if by is not None else None
    reader = TraceReader(path, run_id=run_id)
    ledger = Ledger(grouping=grouping).feed(reader)
    if run_id is not None and run_id not in ledger.runs:
        raise UnknownRunError(reader.name, run_id)
    if not ledger.runs:
        raise NoEventsError(f"{reader.name}: holds no events", hint="is the run still starting?")
    return MetricsReport(reader.name, run_id, ledger.runs, ledger.groups, reader.warnings())


def usage_cost(usage: Usage) -> float | None:
    """The provider-recorded cost of ``usage``, or None when no event recorded one."""
    return usage.recorded_cost_usd if usage.recorded_events else None


def run_document(tally: Tally) -> dict[str, Any]:
    """A run's metrics as a JSON-ready dict."""
    node_usage = tally.node_usage
    attempts = sorted(a for a in tally.attempts if isinstance(a, int))
    return {
        "run_id": next(iter(tally.run_ids), None),
        "thread_id": tally.thread_id,
        "graph": tally.graph,
        "tenant": tally.tenant,
        "labels": tally.labels,
        "attempts": attempts,
        "status": tally.shown_status,
        "stop_reason": tally.stop_reason,
        **counts_document(tally),
        "retries": tally.retries + max(len(attempts) - 1, 0),
        "node_retries": tally.retries,
        "resumes": max(len(attempts) - 1, 0),
        "tokens": {"total": node_usage.tokens + tally.outside.tokens, "nodes": node_usage.tokens,
                   "outside_nodes": tally.outside.tokens},
        "recorded_cost_usd": usage_cost(tally.usage),
        "meter": tally.meter,
        "duration_ms": {"nodes": sum(s.duration_ms for s in tally.nodes.values()),
                        "wall": tally.wall_ms},
        "nodes": {name: node_document(tally, name) for name in tally.nodes},
        "outside_nodes": {"events": dict(tally.outside_kinds), "tokens": tally.outside.tokens,
                          "recorded_cost_usd": usage_cost(tally.outside)},
        "substeps": tally.substeps,
        "admission_events": tally.admission_events,
        "failures": [
            {"node": f.node, "type": f.exception_type, "count": f.count, "first_message": f.first_message,
             "first_attempt": f.first_attempt, "first_step": f.first_step}
            for f in tally.failures.values()
        ],
    }


def counts_document(tally: Tally) -> dict[str, int]:
    """How many node executions started, completed, failed, were interrupted or never finished."""
    nodes = tally.nodes.values()
    return {
        "node_executions": tally.executions,
        "completed": sum(s.completed for s in nodes),
        "failed": sum(s.failed for s in nodes),
        "interrupted": sum(s.interrupted for s in nodes),
        "unfinished": tally.unfinished,
    }


def combined_document(tallies: list[Tally]) -> dict[str, Any]:
    """Counts and spend summed over several tallies (every run of a trace, say)."""
    parts = [group_document(tally) for tally in tallies]
    recorded = [p["recorded_cost_usd"] for p in parts if p["recorded_cost_usd"] is not None]
    return {
        "runs": sum(p["runs"] for p in parts),
        **{key: sum(p[key] for p in parts) for key in
           ("node_executions", "completed", "failed", "interrupted", "unfinished", "duration_ms")},
        "tokens": {key: sum(p["tokens"][key] for p in parts) for key in ("total", "nodes", "outside_nodes")},
        "recorded_cost_usd": sum(recorded) if recorded else None,
    }


def node_document(tally: Tally, name: str) -> dict[str, Any]:
    """One node's counts, durations and spend."""
    stats = tally.nodes[name]
    closed = stats.closed
    return {
        "executions": stats.executions,
        "completed": stats.completed,
        "failed": stats.failed,
        "interrupted": stats.interrupted,
        "duration_ms": stats.duration_ms,
        "mean_ms": stats.duration_ms / closed if closed else None,
        "max_ms": stats.max_duration_ms,
        "tokens": stats.usage.tokens,
        "recorded_cost_usd": usage_cost(stats.usage),
    }


def group_document(tally: Tally) -> dict[str, Any]:
    """A group's runs, node executions and spend."""
    usage = tally.usage
    return {
        "runs": len(tally.run_ids),
        **counts_document(tally),
        "tokens": {"total": usage.tokens, "nodes": usage.tokens - tally.outside.tokens,
                   "outside_nodes": tally.outside.tokens},
        "recorded_cost_usd": usage_cost(usage),
        "duration_ms": sum(s.duration_ms for s in tally.nodes.values()),
    }
