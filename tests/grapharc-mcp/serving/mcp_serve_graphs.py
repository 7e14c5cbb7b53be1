"""Registries the tests pass to ``grapharc mcp serve --registry``: the credit demo (its threads are
carried on by ``grapharc session approve`` in another process, which registers it by name), a
counter under a budget of node runs that traces to the file ``$MCP_SERVE_TRACE`` names (if set), and graphs
whose names cannot be served as MCP tools."""

from __future__ import annotations

import os
from typing import Any

from grapharc.examples.approval import register_credit_graph
from grapharc.runtime.budget import Budget
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState

CREDIT_GRAPH = "credit-approval"
NEEDS_SIGN_OFF = "LN-7310"  # above the sign-off limit: the thread pauses for the credit desk
WITHIN_LIMIT = "LN-2204"  # within the limit: paid out without asking anyone
COUNTER = "counter"
COUNTER_BUDGET = 5  # node runs a counter thread may spend
TRACE_VARIABLE = "MCP_SERVE_TRACE"


class NoteState(GraphARCState):
    """One note, written by the one node."""

    note: str = ""


def write_note(state: NoteState) -> dict[str, Any]:
    return {"note": "written"}


def one_node_graph(name: str) -> GraphARC:
    """A graph named ``name``: START -> write_note -> END."""
    graph = GraphARC(NoteState, name=name)
    graph.add_node("write_note", write_note, writes={"note"})
    graph.add_edge(START, "write_note")
    graph.add_edge("write_note", END)
    return graph


class CounterState(GraphARCState):
    """How far to count, and how far the node has counted."""

    goal: int = 0
    count: int = 0
    failing: bool = False


class CounterJammed(RuntimeError):
    """What the counter's node raises when its input asks it to."""


def count(state: CounterState) -> dict[str, Any]:
    if state.failing:
        raise CounterJammed("the counter is jammed")
    return {"count": state.count + 1}


def count_again(state: CounterState) -> str:
    return "count" if state.count < state.goal else END


def counter_graph() -> GraphARC:
    """``count`` runs until ``count`` reaches ``goal``, each run charged to the budget."""
    graph = GraphARC(CounterState, name=COUNTER, budget=Budget(max_iterations=COUNTER_BUDGET),
                     trace=os.environ.get(TRACE_VARIABLE))
    graph.add_node("count", count, writes={"count"})
    graph.add_edge(START, "count")
    graph.add_conditional_edges("count", count_again, ["count", END])
    return graph


def register(manager: Any) -> None:
    """The credit demo and the counter."""
    register_credit_graph(manager)
    manager.register(counter_graph())


def register_badly_named(manager: Any) -> None:
    """A graph whose name has a space, which no MCP tool name may have."""
    manager.register(one_node_graph("weekly report"))


def register_reader_named(manager: Any) -> None:
    """A graph with the name of the server's own thread_status tool."""
    manager.register(one_node_graph("thread_status"))


def register_nothing(manager: Any) -> None:
    """Registers no graph at all."""


def register_chattily(manager: Any) -> None:
    """Prints (as ``builtins:print`` given as a registry would) and registers the graphs."""
    print("registering", manager)
    register(manager)
