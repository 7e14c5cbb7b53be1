"""A graph the store tests' server registers (``--registry store_graphs:register``): its one node
keeps the note it is given in the long-term store, under the writer's name, through LangGraph's
``store`` parameter, and reads back what the store finds for the note's words."""

from __future__ import annotations

from typing import Any

from langgraph.store.base import BaseStore
from pydantic import Field

from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState
from grapharc.session.manager import SessionManager

REMEMBER = "remember"


class NoteState(GraphARCState):
    """Who writes, the note, and the keys the store found for its words."""

    who: str = "ada"
    note: str = ""
    found: list[str] = Field(default_factory=list)


def remember(state: NoteState, store: BaseStore) -> dict[str, Any]:
    store.put(("notes", state.who), "latest", {"text": state.note})
    return {"found": [item.key for item in store.search(("notes", state.who), query=state.note)]}


def register(manager: SessionManager) -> None:
    graph = GraphARC(NoteState, name=REMEMBER)
    graph.add_node("remember", remember, writes={"found"})
    graph.add_edge(START, "remember")
    graph.add_edge("remember", END)
    manager.register(graph)
