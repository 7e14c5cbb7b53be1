"""The API tests' graphs (``api_graphs``) and two more for the cancel tests (``--registry
cancel_graphs:register``): the credit desk is asked while, in the same superstep, the waiter
waits beside it, so a run cancelled then leaves a checkpoint that waits on an approval; and a plain
``interrupt()`` asked before the waiter waits (the gated waiter's plain twin)."""

from __future__ import annotations

from typing import Any

from api_graphs import (
    PLAIN_QUESTION,
    GatedState,
    WaiterState,
    ask_the_desk,
    register_ask_then_wait,
    wait_for_release,
)
from api_graphs import register as register_api_graphs
from langgraph.types import interrupt

from grapharc.examples.approval import CREDIT_DESK
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.session.approvals import Approvers

ASK_BESIDE_WAITER = "ask-beside-waiter"
PLAIN_WAITER = "plain-waiter"


class PlainWaiterState(WaiterState):
    """The waiter's fields, and what the plain question was answered with."""

    reply: Any = None


def ask_plainly(state: PlainWaiterState) -> dict[str, Any]:
    return {"reply": interrupt(PLAIN_QUESTION)}


def register(manager: Any) -> None:
    """Register the API tests' graphs, the desk asked beside a waiter and the plain waiter on ``manager``."""
    register_api_graphs(manager)
    beside = GraphARC(GatedState, name=ASK_BESIDE_WAITER)
    beside.add_node("ask_the_desk", ask_the_desk, writes={"answer"})
    beside.add_node("wait_for_release", wait_for_release, writes={"released"})
    for node in ("ask_the_desk", "wait_for_release"):
        beside.add_edge(START, node)
        beside.add_edge(node, END)
    manager.register(beside, approvers={"ask_the_desk": Approvers(frozenset({CREDIT_DESK}))})
    register_ask_then_wait(manager, PLAIN_WAITER, PlainWaiterState, ask_plainly, "reply")
