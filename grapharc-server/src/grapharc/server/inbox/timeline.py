"""A thread's audit trail as a timeline people read: per step the node, when, how long, what it cost.

The session store's audit trail is the record (DESIGN.md, "One record"): every line of the timeline
is one of its entries, in the order written. A node's entry says which node ran, at which step, and
which fields it wrote; its trace (when the thread has one: ``trace`` events, matched by node and step)
adds how long it took and the tokens and cost it was charged. A run's entry carries the run's
duration and spend, so a thread without a trace still shows what each run took. The thread's other
entries (created, asked, decided, paused, ended...) are said in words; the bookkeeping of leases
(``claimed``) is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from grapharc.session.records import AuditEntry, AuditKind
from grapharc.trace import schema as ts

RUN = "run"
"""The kind of the entry a turn writes for each run it made (``store.record_run``)."""
LEFT_OUT = frozenset({AuditKind.CLAIMED})
_CLOSING = frozenset({ts.END, ts.ERROR, ts.INTERRUPT})


@dataclass(frozen=True, slots=True)
class Moment:
    """One line of the timeline: when, what kind of entry, what happened in words, the node and step
    (None: not a node's), how long it took, and the tokens and cost charged (None: not known)."""

    at: float
    kind: str
    what: str
    node: str | None = None
    step: int | None = None
    duration_ms: float | None = None
    tokens: int | None = None
    cost_usd: float | None = None


@dataclass(frozen=True, slots=True)
class _Spent:
    duration_ms: float | None
    tokens: int | None
    cost_usd: float | None
    finished_at: float | None


def timeline(entries: Iterable[AuditEntry], trace: Iterable[Mapping[str, Any]] = ()) -> list[Moment]:
    """The thread's timeline from its audit ``entries`` (oldest first), each node's line given its
    duration, tokens and cost from the thread's ``trace`` events when they are there."""
    spent = _spent_by_node(trace)
    moments = []
    for entry in entries:
        if entry.kind in LEFT_OUT:
            continue
        if entry.kind == AuditKind.NODE and entry.node is not None:
            moments.append(_node_moment(entry, spent.get((entry.node, entry.step))))
        else:
            moments.append(Moment(entry.at, entry.kind, _said(entry), entry.node, entry.step,
                                  *_run_spend(entry)))
    return moments


def _node_moment(entry: AuditEntry, spent: _Spent | None) -> Moment:
    writes = entry.detail.get("writes")
    what = f"wrote {', '.join(map(str, writes))}" if isinstance(writes, list) and writes else "wrote nothing"
    if writes is None:
        what = "ran (its writes were not saved)"
    if spent is None:
        return Moment(entry.at, entry.kind, what, entry.node, entry.step)
    return Moment(spent.finished_at or entry.at, entry.kind, what, entry.node, entry.step,
                  spent.duration_ms, spent.tokens, spent.cost_usd)


def _spent_by_node(trace: Iterable[Mapping[str, Any]]) -> dict[tuple[str, int | None], _Spent]:
    """Each node execution's duration, tokens and cost as the trace's closing events record them, by
    (node, step); a step run again (a retried turn) keeps its last execution's."""
    spent: dict[tuple[str, int | None], _Spent] = {}
    for event in trace:
        node = event.get(ts.NODE)
        if event.get(ts.PHASE) in _CLOSING and isinstance(node, str):
            spent[(node, event.get(ts.STEP))] = _Spent(
                _number(event.get(ts.DURATION_MS)), _whole(event.get(ts.TOKENS)),
                _number(event.get(ts.COST_USD)), _number(event.get(ts.TS)))
    return spent


def _run_spend(entry: AuditEntry) -> tuple[float | None, int | None, float | None]:
    if entry.kind != RUN:
        return None, None, None
    detail = entry.detail
    return _number(detail.get("duration_ms")), _whole(detail.get("tokens")), _number(detail.get("cost_usd"))


def _said(entry: AuditEntry) -> str:
    """An entry other than a node's, in words."""
    detail, kind = entry.detail, entry.kind
    by = f" by {detail['by']}" if detail.get("by") else ""
    sayings: dict[str, str] = {
        AuditKind.CREATED: "thread created" + (f" by {detail['owner']}" if detail.get("owner") else ""),
        AuditKind.ASKED: f"asked for a decision at {detail.get('node', 'a node')}",
        AuditKind.DECIDED: f"{detail.get('decision', 'decided')}{by}",
        AuditKind.SUPERSEDED: "approval superseded: what it asked about changed",
        AuditKind.RECLAIMED: f"taken over by {detail.get('runner', 'another runner')} (its runner stopped)",
        AuditKind.PAUSED: "paused, waiting for a decision",
        AuditKind.COMPLETED: "completed",
        AuditKind.REJECTED: "ended: rejected",
        AuditKind.EXPIRED: "ended: the approval expired",
        AuditKind.FAILED: f"failed: {detail.get('error', 'see the thread')}",
        AuditKind.CANCELLED: f"cancelled{by}",
        AuditKind.UPDATED: f"state edited{by}",
        AuditKind.DIRECTED: "directed by a client",
        AuditKind.COPIED: f"copied from thread {detail.get('from', '?')}{by}",
        AuditKind.PRUNED: f"old checkpoints pruned{by}",
        AuditKind.METADATA: f"metadata changed{by}",
        AuditKind.EVENT: "an event was delivered",
    }
    if kind == RUN:
        steps = detail.get("iterations")
        return f"run {detail.get('status', 'ended')}" + (f" after {steps} steps" if steps else "")
    return sayings.get(kind, kind)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
