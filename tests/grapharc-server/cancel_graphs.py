"""The API tests' graphs (``api_graphs``) and one more for the cancel tests (``--registry
cancel_graphs:register``): the credit desk is asked while, in the same superstep, the waiter
waits beside it, so a run cancelled then leaves a checkpoint that waits on an approval."""

from __future__ import annotations

from typing import Any

from api_graphs import GatedState, ask_the_desk, wait_for_release
from api_graphs import register as register_api_graphs

from grapharc.examples.approval import CREDIT_DESK
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.session.approvals import Approvers

ASK_BESIDE_WAITER = "ask-beside-waiter"


def register(manager: Any) -> None:
    """Register the API tests' graphs and the desk asked beside a waiter on ``manager``."""
    register_api_graphs(manager)
    beside = GraphARC(GatedState, name=ASK_BESIDE_WAITER)
    beside.add_node("ask_the_desk", ask_the_desk, writes={"answer"})
    beside.add_node("wait_for_release", wait_for_release, writes={"released"})
    for node in ("ask_the_desk", "wait_for_release"):
        beside.add_edge(START, node)
        beside.add_edge(node, END)
    manager.register(beside, approvers={"ask_the_desk": Approvers(frozenset({CREDIT_DESK}))})
