"""A run as its store keeps it: who asked for what on which thread, and how far it got.

A run is one turn of a thread, asked for through the API: ``request`` is what the turn does
(``{"kind": "start", "input": {...}}`` or ``{"kind": "resume", "approval_id", "decision",
"decider"}``, with ``"on_completion": "delete"`` when the thread goes once the run has ended, as a
stateless run's does), ``budget`` the ceilings it runs under (kept here so a worker that reclaims the
run keeps them). ``after_seq``/``end_seq`` bound its part of the thread's audit trail: the
worker that executes it records ``after_seq`` as its turn begins (a run queued behind another
does not know it earlier), and ``end_seq`` as it ends.
``worker`` and ``claim_expires_at`` say which worker executes it and until when its claim holds
without renewal; ``attempts`` counts the claims (a reclaim after a worker's death adds one). A
cancel asked of a running run sets ``cancel_requested`` and puts who asked and the action
(``interrupt`` or ``rollback``) in its request under ``"cancel"``, for the worker that executes it,
whichever process that is. ``not_before`` (epoch seconds) is when a pending run may first be
claimed (a run created with ``after_seconds``); None: at once.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

from grapharc.runtime.budget import Budget
from grapharc.session.sql_dialect import Row

PENDING, RUNNING = "pending", "running"
SUCCESS, ERROR, INTERRUPTED = "success", "error", "interrupted"
ENDED = frozenset({SUCCESS, ERROR, INTERRUPTED})
STATUSES = (PENDING, RUNNING, SUCCESS, ERROR, INTERRUPTED)
REJECT, ENQUEUE = "reject", "enqueue"
INTERRUPT: Final = "interrupt"
ROLLBACK: Final = "rollback"
"""The cancel actions, and the multitask strategies that cancel a thread's runs in flight with them."""
CANCEL = "cancel"
ON_COMPLETION = "on_completion"
DELETE, KEEP = "delete", "keep"


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run, as stored; ``seq`` is its place in the queue (given by the store)."""

    run_id: str
    thread_id: str
    assistant_id: str
    request: dict[str, Any]
    created_at: float
    updated_at: float
    after_seq: int | None = None
    stream_modes: tuple[str, ...] = ("values",)
    budget: Budget | None = None
    multitask_strategy: str = REJECT
    status: str = PENDING
    end_seq: int | None = None
    error: str | None = None
    worker: str | None = None
    claim_expires_at: float | None = None
    cancel_requested: bool = False
    attempts: int = 0
    seq: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    not_before: float | None = None
    webhook: bool = False
    """Whether the run has a webhook (``grapharc.runs.tables.WEBHOOK_FLAG``)."""

    @property
    def ended(self) -> bool:
        """True once the run has a final status."""
        return self.status in ENDED

    @property
    def cancel(self) -> dict[str, Any]:
        """The cancel asked of the run while it ran (``by``, ``action``); empty if none was."""
        return dict(self.request.get(CANCEL) or {})


def budget_text(budget: Budget | None) -> str | None:
    """A budget as the JSON a store keeps (``Infinity`` allowed: stores keep it as text)."""
    return None if budget is None else json.dumps(dataclasses.asdict(budget), sort_keys=True)


def budget_of(text: str | None) -> Budget | None:
    """The budget ``budget_text`` wrote."""
    return None if text is None else _budget_of(text)


@lru_cache(maxsize=256)
def _budget_of(text: str) -> Budget:
    """The budget of a text read before, checked once (a budget is immutable: runs under the same
    ceiling share one; a server decodes its ceiling with every run record it reads)."""
    return Budget(**json.loads(text))


@lru_cache(maxsize=256)
def _stream_modes_of(text: str) -> tuple[str, ...]:
    """A run's stream modes as its JSON column keeps them (a tuple: shared as the budget is)."""
    return tuple(json.loads(text))


def record_of(row: Row) -> RunRecord:
    """A store row (its columns named as ``RunRecord``'s fields, JSON kept as text; a driver's own
    row, read by name) as a record."""
    return RunRecord(
        run_id=row["run_id"], thread_id=row["thread_id"], assistant_id=row["assistant_id"],
        request=json.loads(row["request"]), created_at=row["created_at"], updated_at=row["updated_at"],
        after_seq=row["after_seq"], stream_modes=_stream_modes_of(row["stream_modes"]),
        budget=budget_of(row["budget"]), multitask_strategy=row["multitask_strategy"],
        status=row["status"], end_seq=row["end_seq"], error=row["error"], worker=row["worker"],
        claim_expires_at=row["claim_expires_at"], cancel_requested=bool(row["cancel_requested"]),
        attempts=row["attempts"], seq=row["seq"], metadata=json.loads(row["metadata"]),
        not_before=row["not_before"], webhook=bool(row["webhook"]))


def row_values(run: RunRecord) -> tuple[Any, ...]:
    """The values a store inserts for a new run, in ``INSERT_COLUMNS`` order."""
    # characters unescaped: a lone surrogate fails to encode in the driver and is refused naming it
    # (escaped, it was kept, and every later answer quoting it failed to encode)
    return (run.run_id, run.thread_id, run.assistant_id, json_text(run.request), run.created_at,
            run.updated_at, run.after_seq, json.dumps(list(run.stream_modes)), budget_text(run.budget),
            run.multitask_strategy, PENDING, json_text(run.metadata), run.not_before, run.webhook)


def json_text(value: Any) -> str:
    """A JSON column's text, characters as they are (by one encoder built once)."""
    return _JSON.encode(value)


_JSON = json.JSONEncoder(ensure_ascii=False)


INSERT_COLUMNS = ("run_id", "thread_id", "assistant_id", "request", "created_at", "updated_at",
                  "after_seq", "stream_modes", "budget", "multitask_strategy", "status", "metadata",
                  "not_before", "webhook")


@dataclass(frozen=True, slots=True)
class LiveEvent:
    """One event of a run's live log: the ``n``-th of the run, sent in stream ``mode`` as SSE
    ``event`` with ``data`` (JSON text), kept at ``at`` (epoch seconds, the run's worker's clock)."""

    n: int
    mode: str
    event: str
    data: str
    at: float
