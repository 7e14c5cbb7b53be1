"""Graphs the API tests' server registers (``--registry api_graphs:register``): the credit demo,
and a graph whose one node waits until a file the test names exists, so a run stays in flight
for as long as the test needs it to."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from grapharc.examples.approval import register_credit_graph
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState

WAITER = "waiter"


class WaiterState(GraphARCState):
    """Where the release file is, and whether the node saw it."""

    release_file: str = ""
    released: bool = False


def wait_for_release(state: WaiterState) -> dict[str, Any]:
    while not Path(state.release_file).exists():
        time.sleep(0.05)
    return {"released": True}


def register(manager: Any) -> None:
    """Register the credit demo and the waiter on ``manager``."""
    register_credit_graph(manager)
    waiter = GraphARC(WaiterState, name=WAITER)
    waiter.add_node("wait_for_release", wait_for_release, writes={"released"})
    waiter.add_edge(START, "wait_for_release")
    waiter.add_edge("wait_for_release", END)
    manager.register(waiter)
