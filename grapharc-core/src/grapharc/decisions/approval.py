"""One approval model: every ``ask`` (admission, policy, tool) is decided the same way.

``request_approval(request, approver)`` answers an ``ApprovalRequest``:

* inside a session turn, the ask becomes the session's durable approval record: the node
  calls LangGraph's ``interrupt()``, the thread pauses, ``grapharc session status`` shows the
  question, and a decision made later, from any process, resumes it with the answer;
* otherwise an ``approver`` callable, if one was given, decides at once (an approver that
  raises declines: approval fails closed);
* otherwise a checkpointed run pauses on the ask like on any interrupt (answer it with
  ``compiled.resume(True)`` or ``"approved"``; anything else declines);
* otherwise nobody can answer, and the ask stays unanswered, which callers refuse.

A node that asks is re-run from its first line when it resumes (LangGraph's interrupt
semantics), so what it does before asking must be repeatable; admission is, by design.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from grapharc.runtime.context import CURRENT_RUN, AskMode

if TYPE_CHECKING:
    from grapharc.decisions.audit import AuditRecord

APPROVED_ANSWERS = frozenset({True, "approved"})
QUESTION_ARGUMENTS = 400
"""Characters of a request's arguments its one-line question shows (the payload keeps them all)."""


class Answer(StrEnum):
    """What became of an ask."""

    APPROVED = "approved"
    DECLINED = "declined"
    UNANSWERED = "unanswered"


@dataclass(frozen=True)
class ApprovalRequest:
    """What a person (or an approver) is asked: the subject, the rule that asked, and why."""

    resource: str
    subject: str
    rule_id: str
    reason: str
    route: str = "human"
    tenant: str | None = None
    arguments: dict[str, Any] | None = None
    """What exactly would run (a tool call's validated arguments), so the answer is about it."""

    @classmethod
    def from_audit(cls, record: AuditRecord, route: str = "human",
                   arguments: dict[str, Any] | None = None) -> ApprovalRequest:
        """The request an audited ``ask`` decision makes (about ``arguments``, if given)."""
        return cls(record.resource, record.subject, record.rule_id, record.reason, route, record.tenant,
                   arguments)

    @property
    def question(self) -> str:
        """The request in one line, as an approval inbox shows it (long arguments clipped)."""
        rule = f" (rule {self.rule_id})" if self.rule_id else ""
        called = ""
        if self.arguments is not None:
            shown = json.dumps(self.arguments, ensure_ascii=False, sort_keys=True, default=str)
            clipped = len(shown) > QUESTION_ARGUMENTS
            called = f" with {shown[:QUESTION_ARGUMENTS] + '…' if clipped else shown}"
        return f"allow {self.resource} {self.subject}{called}?{rule} {self.reason}".rstrip()

    def payload(self) -> dict[str, Any]:
        """What the durable approval records: the question and the request itself."""
        return {"question": self.question, "request": asdict(self)}


Approver = Callable[[ApprovalRequest], bool]


def request_approval(request: ApprovalRequest, approver: Approver | None = None) -> Answer:
    """Decide ``request`` by the one approval model (see the module docstring)."""
    run = CURRENT_RUN.get()
    mode = run.asks if run is not None else AskMode.NONE
    if mode == AskMode.SESSION or (mode == AskMode.CHECKPOINT and approver is None):
        from langgraph.types import interrupt

        answer = interrupt(request.payload())
        return Answer.APPROVED if answer in APPROVED_ANSWERS else Answer.DECLINED
    if approver is None:
        return Answer.UNANSWERED
    try:
        return Answer.APPROVED if approver(request) is True else Answer.DECLINED
    except Exception:
        return Answer.DECLINED


def unanswered_reason() -> str:
    """Why an ask outside any session or checkpointed run, with no approver, stays unanswered."""
    return ("it needs an approval and nothing here can give one: run it in a session "
            "(the ask becomes a durable approval) or pass an approver")
