"""The credit-approval demo: a graph that loops, asks a person above a limit, and pays out.

``fetch_application -> score -> assess``; ``assess`` cannot judge an unverified income,
so it routes to ``fetch_income`` and back (a real cycle, not a pipeline). Inside
policy, ``check_threshold`` sends amounts above the sign-off limit to ``sign_off``,
which asks the credit desk with ``interrupt()`` and pauses the thread; amounts within
the limit go straight to ``disburse`` and nobody is asked. Outside policy the
application is declined without asking anyone.

The interrupt trap, handled here on purpose: on resume ``sign_off`` runs again from its
first line, so its first line is the ``interrupt()`` call and nothing with an effect
sits above it; paying out is a node of its own (``disburse``), reached only after the
answer. The data is made up for the demo; ``payroll_income`` stands in for a payroll
service.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Annotated, Any

from langgraph.types import interrupt
from pydantic import Field

from grapharc.errors import GraphARCError
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState
from grapharc.session.approvals import Approvers, Shown

GRAPH_NAME = "credit-approval"
SIGN_OFF_LIMIT = 15_000_00  # cents
POLICY_SHARE = 0.40  # the most of a verified monthly income an instalment may take
ANNUAL_RATE = 0.065  # flat yearly rate used to work out the instalment
CREDIT_DESK = "credit-desk"
REQUEST_DAYS = 7


@dataclass(frozen=True, slots=True)
class Application:
    """One loan application as the demo's made-up lender keeps it."""

    customer: str
    applicant: str
    amount: int  # cents
    months: int
    declared_income: int  # cents a month
    bureau_score: int


APPLICATIONS = {
    "LN-7310": Application("C-5521", "Rosalind Achterberg", 24_000_00, 48, 4_150_00, 702),
    "LN-2204": Application("C-1187", "Tomás Ekwueme", 6_500_00, 24, 2_900_00, 688),
    "LN-9917": Application("C-7730", "Hedda Lindqvist", 12_000_00, 12, 1_800_00, 655),
}
PAYROLL = {"C-5521": 3_980_00, "C-1187": 2_870_00, "C-7730": 1_650_00}


class UnknownApplicationError(GraphARCError):
    """An application id the demo's lender has no record of."""


def payroll_income(customer: str) -> int:
    """The monthly income the payroll service confirms for ``customer``, in cents."""
    return PAYROLL[customer]


def money(cents: int) -> str:
    """Cents as the demo prints money: ``EUR 24,000.00``."""
    return f"EUR {cents / 100:,.2f}"


class CreditState(GraphARCState):
    """What the graph knows about one application as it moves through the checks."""

    application_id: str = ""
    customer: str = ""
    applicant: str = ""
    amount: int = 0
    months: int = 0
    declared_income: int = 0
    bureau_score: int = 0
    verified_income: int | None = None
    within_policy: bool = False
    answer: str = ""
    released: bool = False
    notes: Annotated[list[str], operator.add] = Field(default_factory=list)


def lookup(application_id: str) -> Application:
    """The application, or ``UnknownApplicationError`` naming the ones there are."""
    found = APPLICATIONS.get(application_id)
    if found is None:
        raise UnknownApplicationError(f"no application {application_id!r}",
                                      hint=f"the demo knows {', '.join(sorted(APPLICATIONS))}")
    return found


def fetch_application(state: CreditState) -> dict[str, Any]:
    app = lookup(state.application_id)
    return {"customer": app.customer, "applicant": app.applicant, "amount": app.amount,
            "months": app.months, "declared_income": app.declared_income,
            "notes": [f"{state.application_id} from {app.applicant}: {money(app.amount)} "
                      f"over {app.months} months"]}


def score(state: CreditState) -> dict[str, Any]:
    app = lookup(state.application_id)
    return {"bureau_score": app.bureau_score,
            "notes": [f"bureau score {app.bureau_score}, declared income "
                      f"{money(state.declared_income)} a month"]}


def instalment(state: CreditState) -> int:
    """The monthly instalment in cents at the flat yearly rate."""
    total = state.amount * (1 + ANNUAL_RATE * state.months / 12)
    return round(total / state.months)


def assess(state: CreditState) -> dict[str, Any]:
    if state.verified_income is None:
        return {"notes": ["income not verified yet"]}
    due = instalment(state)
    share = due / state.verified_income
    inside = share <= POLICY_SHARE
    verdict = "inside" if inside else "outside"
    return {"within_policy": inside,
            "notes": [f"instalment {money(due)} is {share:.0%} of verified income: "
                      f"{verdict} the {POLICY_SHARE:.0%} policy"]}


def route_assessment(state: CreditState) -> str:
    if state.verified_income is None:
        return "verify"
    return "within" if state.within_policy else "outside"


def fetch_income(state: CreditState) -> dict[str, Any]:
    income = payroll_income(state.customer)
    return {"verified_income": income, "notes": [f"payroll confirms {money(income)} a month"]}


def check_threshold(state: CreditState) -> dict[str, Any]:
    if state.amount > SIGN_OFF_LIMIT:
        return {"notes": [f"{money(state.amount)} is above the {money(SIGN_OFF_LIMIT)} sign-off limit"]}
    return {"notes": [f"{money(state.amount)} is within the {money(SIGN_OFF_LIMIT)} sign-off limit; "
                      "nobody needs to sign"]}


def route_threshold(state: CreditState) -> str:
    return "sign_off" if state.amount > SIGN_OFF_LIMIT else "release"


def question(state: CreditState) -> str:
    """What the credit desk is asked."""
    return (f"release {money(state.amount)} to {state.applicant} (customer {state.customer}, "
            f"application {state.application_id})?")


def sign_off(state: CreditState) -> dict[str, Any]:
    answer = interrupt(question(state))  # first line: nothing above it runs twice
    return {"answer": answer, "notes": [f"answer: {answer}"]}


def route_answer(state: CreditState) -> str:
    return "approved" if state.answer == "approved" else "rejected"


def disburse(state: CreditState) -> dict[str, Any]:
    return {"released": True, "notes": [f"{money(state.amount)} released to {state.applicant}"]}


def decline(state: CreditState) -> dict[str, Any]:
    reason = "the credit desk said no" if state.answer == "rejected" else "outside lending policy"
    return {"released": False, "notes": [f"not released: {reason}"]}


def build_credit_graph() -> GraphARC:
    """The credit-approval graph, with its assess -> fetch_income -> assess cycle."""
    g = GraphARC(CreditState, name=GRAPH_NAME)
    g.add_node("fetch_application", fetch_application,
               writes={"customer", "applicant", "amount", "months", "declared_income", "notes"})
    g.add_node("score", score, writes={"bureau_score", "notes"})
    g.add_node("assess", assess, writes={"within_policy", "notes"})
    g.add_node("fetch_income", fetch_income, writes={"verified_income", "notes"})
    g.add_node("check_threshold", check_threshold, writes={"notes"})
    g.add_node("sign_off", sign_off, writes={"answer", "notes"})
    g.add_node("disburse", disburse, writes={"released", "notes"})
    g.add_node("decline", decline, writes={"released", "notes"})
    g.add_edge(START, "fetch_application")
    g.add_edge("fetch_application", "score")
    g.add_edge("score", "assess")
    g.add_conditional_edge("assess", route_assessment,
                           {"verify": "fetch_income", "within": "check_threshold", "outside": "decline"})
    g.add_edge("fetch_income", "assess")
    g.add_conditional_edge("check_threshold", route_threshold,
                           {"sign_off": "sign_off", "release": "disburse"})
    g.add_conditional_edge("sign_off", route_answer, {"approved": "disburse", "rejected": "decline"})
    g.add_edge("disburse", END)
    g.add_edge("decline", END)
    return g


def outcome(values: dict[str, Any]) -> str:
    """A completed thread in one word: released or declined."""
    return "released" if values.get("released") else "declined"


SHOWN_TO_THE_DESK = (
    Shown("applicant"), Shown("amount", format="cents:EUR"), Shown("months", "Term (months)"),
    Shown("bureau_score"), Shown("declared_income", "Declared monthly income", "cents:EUR"),
    Shown("verified_income", "Verified monthly income", "cents:EUR"), Shown("within_policy"), Shown("notes"),
)
"""What the credit desk sees when it decides a sign-off: the evidence the checks gathered."""


def register_credit_graph(manager: Any) -> None:
    """Register the demo graph on a SessionManager: the credit desk answers ``sign_off``."""
    desk = Approvers(frozenset({CREDIT_DESK}), ttl=REQUEST_DAYS * 86400.0, shown_fields=SHOWN_TO_THE_DESK)
    manager.register(build_credit_graph(), outcome=outcome, approvers={"sign_off": desk})
