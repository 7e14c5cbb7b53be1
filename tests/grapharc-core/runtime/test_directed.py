"""A client's goto and update checked against the graph as declared (``grapharc.runtime.directed``),
and the routing a node's goto may take (``GraphARC.routes_from``)."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from grapharc.runtime.compiled import DirectedCommand
from grapharc.runtime.directed import GotoNotRoutedError, NowhereToStandError, directed
from grapharc.runtime.errors import RunInputError, StateTypeError, WritePermissionError
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState


class Steer(GraphARCState):
    asked: Any = None
    note: str = ""
    left: bool = False
    right: bool = False


def ask(state: Steer) -> dict[str, Any]:
    return {"asked": interrupt("which way?")}


def graph() -> GraphARC:
    steer = GraphARC(Steer, name="steer")
    steer.add_node("ask", ask, writes={"asked", "note"})
    steer.add_node("left", lambda s: {"left": True}, writes={"left"})
    steer.add_node("right", lambda s: {"right": True}, writes={"right"})
    steer.add_edge(START, "ask")
    steer.add_conditional_edges("ask", lambda s: "left" if s.asked == "left" else "right", ["left", "right"])
    steer.add_edge("left", END)
    steer.add_edge("right", END)
    return steer


def test_routes_from_reads_edges_and_conditional_edges() -> None:
    steer = graph()
    assert steer.routes_from(START) == {"ask"}
    assert steer.routes_from("ask") == {"left", "right"}
    assert steer.routes_from("left") == frozenset()
    free = GraphARC(Steer, name="free")
    free.add_node("ask", ask, writes={"asked"})
    free.add_edge(START, "ask")
    free.add_conditional_edges("ask", lambda s: END)
    assert free.routes_from("ask") is None  # a router that declares no targets may go anywhere


def test_a_checked_goto_and_update_run_and_unchecked_ones_are_refused() -> None:
    steer = graph()
    compiled = steer.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    compiled.invoke({}, config)
    paused = compiled.get_state(config)
    with pytest.raises(GotoNotRoutedError, match="routing"):
        directed(steer, compiled, paused, goto=["ask"])
    with pytest.raises(WritePermissionError):
        directed(steer, compiled, paused, update={"left": True})
    with pytest.raises(StateTypeError):
        directed(steer, compiled, paused, update={"note": 5})
    with pytest.raises(RunInputError, match="only resume"):
        compiled.invoke(Command(resume="left", goto="right"), config)
    command = directed(steer, compiled, paused, goto=["right"], update={"note": "n"}, resume="left")
    assert isinstance(command, DirectedCommand)
    done = compiled.invoke(command, config)
    assert (done["asked"], done["note"], done["left"], done["right"]) == ("left", "n", True, True)
    with pytest.raises(NowhereToStandError):
        directed(steer, compiled, compiled.get_state(config), goto=["left"])
