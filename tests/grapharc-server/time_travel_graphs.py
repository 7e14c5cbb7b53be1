"""The graph the time-travel tests' server registers (``--registry time_travel_graphs:register``):
a writer drafts a text on a topic, a reviewer signs it; each node declares what it writes, so an
edit as one node that writes another's field is refused."""

from __future__ import annotations

from typing import Any

from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState

DRAFTS = "drafts"


class DraftState(GraphARCState):
    """The topic asked for, the draft, how many drafts were written, and the reviewer's verdict."""

    topic: str = ""
    text: str = ""
    drafts: int = 0
    verdict: str = ""


def draft(state: DraftState) -> dict[str, Any]:
    return {"text": f"a note on {state.topic}", "drafts": state.drafts + 1}


def review(state: DraftState) -> dict[str, Any]:
    return {"verdict": f"signed: {state.text}"}


def register(manager: Any) -> None:
    """Register the drafts graph on ``manager``."""
    graph = GraphARC(DraftState, name=DRAFTS)
    graph.add_node("draft", draft, writes={"text", "drafts"})
    graph.add_node("review", review, writes={"verdict"})
    graph.add_edge(START, "draft")
    graph.add_edge("draft", "review")
    graph.add_edge("review", END)
    manager.register(graph)
