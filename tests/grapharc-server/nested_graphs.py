"""A graph with subgraphs for the API tests' server (``--registry nested_graphs:register``): ``nested``
runs ``middle`` as a node, a GraphARC graph that itself runs ``inner`` as a node, each shouting a word."""

from __future__ import annotations

from typing import Any

from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState

NESTED = "nested"


class WordState(GraphARCState):
    """A word, shouted at each level."""

    word: str = ""


def shout(state: WordState) -> dict[str, Any]:
    return {"word": state.word.upper() + "!"}


def _graph(name: str, node: str, body: Any) -> GraphARC:
    graph = GraphARC(WordState, name=name)
    graph.add_node(node, body, writes={"word"})
    graph.add_edge(START, node)
    graph.add_edge(node, END)
    return graph


def register(manager: Any) -> None:
    """Register ``nested`` (middle, whose node is inner) on ``manager``."""
    inner = _graph("inner", "shout", shout).compile()
    middle = _graph("middle", "inner", inner).compile()
    manager.register(_graph(NESTED, "middle", middle))
