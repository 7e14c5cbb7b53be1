"""Approvals are records: what is held, a digest of it, who may decide, until when, the answer.

Two ways to ask a person for a decision, both durable. A ``Gate`` on a node holds the node before it
runs; the session runtime enforces it (by compiling the graph with LangGraph's
``interrupt_before``), so a decision is needed for every execution of the node. A
node may instead call ``interrupt("question")``: the thread pauses inside the node and
the decision comes back as the call's return value.

The trap of the second way: on resume the node runs again from its first line, so
everything above ``interrupt()`` happens twice. Put side effects below the call, or in
a node of their own. Execution is at-least-once per node.

An approval's digest covers the node and its arguments (what a gate's ``arguments``
picks from the state, the whole state by default; an interrupt's value). A decision
is accepted only while the thread is still held on the same digest: changed arguments
supersede the approval and a new one is asked for.

``Approvers.shown_fields`` declares the state fields a node's approvers see when they decide (the
inbox's approval page shows them, formatted as each ``Shown`` says); without it they see the fields
the path so far wrote.

An ``interrupt(value)`` whose node names no ``Approvers`` (and which is not a durable ask of
``grapharc.decisions``) is a plain interrupt, as in LangGraph: it is recorded the same way, but
may be answered with any JSON value (an ``Answer``), which the node receives.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4

from grapharc.session.errors import (
    AlreadyDecidedError,
    ApprovalMismatchError,
    DeciderNotAllowedError,
    SessionError,
    StaleApprovalError,
)
from grapharc.session.records import DECISIONS, GATE, INTERRUPT, OPEN, SUPERSEDED, Approval

MAX_TTL_SECONDS = 366 * 86_400.0
"""An approval may stand at most a year."""

MONEY, CENTS, DATE, PERCENT = "money", "cents", "date", "percent"
SHOWN_FORMATS = ("money:<CURRENCY>", "cents:<CURRENCY>", DATE, PERCENT)
"""How a shown field's value may be written for approvers: an amount of money (``money:EUR``), an
amount in minor units (``cents:EUR``, 2400000 is EUR 24,000.00), epoch seconds as a date, a share
(0.16 as 16%)."""
_CURRENCY = re.compile(r"[A-Z]{3}")


def shown_format(fmt: str) -> tuple[str, str | None]:
    """The kind of a shown field's format and its currency (``cents:EUR`` -> ``("cents", "EUR")``);
    ``SessionError`` naming the formats there are for any other."""
    kind, _, currency = fmt.partition(":") if isinstance(fmt, str) else ("", "", "")
    if kind in (MONEY, CENTS) and _CURRENCY.fullmatch(currency):
        return kind, currency
    if kind in (DATE, PERCENT) and not currency:
        return kind, None
    raise SessionError(f"a shown field's format must be one of {', '.join(SHOWN_FORMATS)} "
                       f"(a currency is three capital letters, as ISO 4217 writes it), got {fmt!r}")


@dataclass(frozen=True, slots=True)
class Shown:
    """A state field the approvers of a node are shown when they decide: its name, the label they
    read (None: the name, in words) and how its value is written (None: as it is; else one of
    ``SHOWN_FORMATS``)."""

    field: str
    label: str | None = None
    format: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.field, str) or not self.field:
            raise SessionError(f"a shown field must name a state field, got {self.field!r}")
        if self.label is not None and (not isinstance(self.label, str) or not self.label.strip()):
            raise SessionError(f"shown field {self.field!r}: its label must be words, got {self.label!r}")
        if self.format is not None:
            shown_format(self.format)


@dataclass(frozen=True, slots=True)
class Approvers:
    """Who may decide a node's approvals (anyone named, if empty), how long a request stands, and
    the state fields they are shown when they decide (``shown_fields``: names or ``Shown``; None:
    the fields the path so far wrote)."""

    who: frozenset[str] = frozenset()
    ttl: float | None = None
    shown_fields: Sequence[Shown | str] | None = None

    def __post_init__(self) -> None:
        ttl = self.ttl
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int | float)
                                or not math.isfinite(ttl) or not 0 < ttl <= MAX_TTL_SECONDS):
            raise SessionError(f"an approval's ttl must be None or seconds above 0 and at most "
                               f"{MAX_TTL_SECONDS:g}, got {ttl!r}")
        if self.shown_fields is not None:
            object.__setattr__(self, "shown_fields", _shown(self.shown_fields))

    def shown(self) -> tuple[Shown, ...] | None:
        """The declared shown fields, each a ``Shown`` (None: none declared)."""
        if self.shown_fields is None:
            return None
        return tuple(item for item in self.shown_fields if isinstance(item, Shown))  # all are, once declared


def _shown(fields: Any) -> tuple[Shown, ...]:
    """``shown_fields`` as ``Shown`` declarations, each field once (``SessionError`` saying what is
    wrong otherwise)."""
    if isinstance(fields, str | Shown) or not isinstance(fields, Iterable):
        raise SessionError(f"shown_fields must be a list of field names or Shown, got {fields!r}")
    shown = tuple(item if isinstance(item, Shown) else Shown(item) for item in fields)
    names = [item.field for item in shown]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise SessionError(f"shown_fields names {', '.join(map(repr, twice))} more than once")
    return shown


@dataclass(frozen=True, slots=True)
class Gate:
    """Hold a node before it runs until a person approves; ``arguments`` picks what is approved."""

    question: str | Callable[[dict[str, Any]], str]
    approvers: Approvers = field(default_factory=Approvers)
    arguments: Callable[[dict[str, Any]], Any] | None = None


@dataclass(frozen=True, slots=True)
class Hold:
    """One thing a paused thread waits on; ``key`` names it (an interrupt id, or checkpoint:node)."""

    kind: str
    node: str
    key: str
    question: str
    digest: str
    approvers: Approvers


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) else repr(value)


def digest(node: str, arguments: Any) -> str:
    """A stable digest of a node and the arguments a decision is about."""
    text = json.dumps({"node": node, "arguments": arguments}, sort_keys=True, default=_plain,
                      separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def gate_hold(node: str, gate: Gate, checkpoint_id: str, values: dict[str, Any]) -> Hold:
    """The hold a gate puts on ``node`` at the checkpoint the thread paused on."""
    arguments = gate.arguments(values) if gate.arguments is not None else values
    question = gate.question(values) if callable(gate.question) else gate.question
    return Hold(GATE, node, f"{checkpoint_id}:{node}", question, digest(node, arguments), gate.approvers)


def interrupt_hold(node: str, interrupt_id: str, value: Any, approvers: Approvers) -> Hold:
    """The hold an ``interrupt(value)`` inside ``node`` puts on the thread."""
    if isinstance(value, str):
        question = value
    elif isinstance(value, Mapping) and isinstance(value.get("question"), str):
        question = value["question"]
    else:
        question = json.dumps(value, sort_keys=True, default=_plain, ensure_ascii=False)
    return Hold(INTERRUPT, node, interrupt_id, question, digest(node, value), approvers)


ASK_PAYLOAD_KEYS = frozenset({"question", "request"})
"""The keys of a durable ask's ``interrupt()`` value (``grapharc.decisions.approval``'s payload)."""


def asks_for_decision(value: Any, approvers: Approvers | None) -> bool:
    """Whether an ``interrupt(value)`` asks for a decision (approved or rejected, by whom the
    approvers allow) rather than any answer: its node names approvers, or it is a durable ask."""
    return approvers is not None or (isinstance(value, Mapping) and set(value) == ASK_PAYLOAD_KEYS)


def request(hold: Hold, thread_id: str, now: float) -> Approval:
    """A new open approval record asking for ``hold``."""
    ttl = hold.approvers.ttl
    return Approval(
        approval_id=f"ap-{uuid4().hex[:12]}", thread_id=thread_id, kind=hold.kind, node=hold.node,
        hold_key=hold.key, question=hold.question, digest=hold.digest,
        deciders=tuple(sorted(hold.approvers.who)), created_at=now,
        expires_at=None if ttl is None else now + ttl,
    )


def check_decision(approval: Approval, thread_id: str, decision: str, decider: str) -> None:
    """Refuse a decision that cannot apply to ``approval`` as it stands (nothing is written)."""
    if decision not in DECISIONS:
        raise ApprovalMismatchError(f"decision {decision!r} for approval {approval.approval_id} "
                                    f"must be one of {', '.join(DECISIONS)}")
    if approval.thread_id != thread_id:
        raise ApprovalMismatchError(
            f"approval {approval.approval_id} belongs to thread {approval.thread_id}, not {thread_id}; "
            f"it cannot release {thread_id}'s hold")
    if approval.state == SUPERSEDED:
        raise StaleApprovalError(
            f"approval {approval.approval_id} on thread {thread_id} is stale: what it asked about "
            "has changed or passed", hint=f"grapharc session status {thread_id} shows the open approvals")
    if approval.state != OPEN:
        raise AlreadyDecidedError(
            f"approval {approval.approval_id} on thread {thread_id} was already {approval.state}"
            + (f" by {approval.decided_by}" if approval.decided_by else ""))
    if not decider:
        raise DeciderNotAllowedError(f"a decision on approval {approval.approval_id} must name who made it")
    if approval.deciders and not deciding_names(decider) & set(approval.deciders):
        raise DeciderNotAllowedError(
            f"{decider!r} may not decide approval {approval.approval_id}; "
            f"it may be decided by {', '.join(approval.deciders)}")


def deciding_names(decider: str) -> set[str]:
    """The names a decider answers to: ``alice`` is alice; ``alice (credit-desk)`` is alice deciding
    for the credit desk, so an approval for either accepts it and the audit keeps both."""
    person, _, role = decider.partition(" (")
    return {decider, person, role[:-1]} if role.endswith(")") and person else {decider}


def latest_by_key(approvals: Iterable[Approval]) -> dict[str, Approval]:
    """The newest approval per hold key that has not been superseded (``approvals`` oldest first)."""
    latest: dict[str, Approval] = {}
    for approval in approvals:
        if approval.state != SUPERSEDED:
            latest[approval.hold_key] = approval
    return latest
