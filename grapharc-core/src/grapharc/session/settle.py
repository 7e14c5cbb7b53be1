"""What a thread does next, decided from its checkpoint and its approval records alone.

After every pass of a turn (and before a recovery) the runtime settles the thread:
done, waiting on a person, ended by a rejection or an expiry, or ready to continue
(with the answers its interrupts are owed). Nothing else is consulted, so a fresh
process settles a thread exactly as the one that paused it would have.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from langgraph.types import Command

from grapharc.session.approvals import Hold, latest_by_key
from grapharc.session.records import (
    APPROVED,
    COMPLETED,
    DECLINED,
    EXPIRED,
    GATE,
    LAPSED,
    OPEN,
    PAUSED,
    REJECTED,
    Approval,
)

CONTINUE = "continue"


@dataclass(frozen=True, slots=True)
class Plan:
    """The next move: ``continue`` with ``payload``, or end the turn in a status (with requests)."""

    kind: str
    payload: Any = None
    requests: tuple[Hold, ...] = ()


def settle(snapshot: Any, holds: Iterable[Hold], approvals: Iterable[Approval],
           answered: Mapping[str, Any] | None = None) -> Plan:
    """The plan for a thread at ``snapshot`` holding ``holds``, given its approvals so far; an
    interrupt is owed its decision, or the value ``answered`` records for its approval (by id)."""
    if not snapshot.tasks:  # not ``next``: it leaves out tasks whose writes are saved already
        return Plan(COMPLETED)
    latest = latest_by_key(approvals)
    waiting = False
    unasked: list[Hold] = []
    answers: dict[str, Any] = {}
    ended: str | None = None
    for hold in holds:
        approval = latest.get(hold.key)
        if approval is None or (approval.state in (APPROVED, DECLINED) and approval.digest != hold.digest):
            unasked.append(hold)
        elif approval.state == OPEN:
            waiting = True
        elif approval.state == LAPSED:
            ended = EXPIRED
        elif hold.kind == GATE:
            if approval.state == DECLINED:
                ended = ended or REJECTED
        else:
            answers[hold.key] = (answered or {}).get(approval.approval_id, approval.state)
    if unasked or waiting:
        return Plan(PAUSED, requests=tuple(unasked))
    if ended is not None:
        return Plan(ended)
    return Plan(CONTINUE, Command(resume=answers) if answers else None)
