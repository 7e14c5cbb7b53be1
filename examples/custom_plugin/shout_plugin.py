"""A tiny GraphARC plugin: one node kind, ``shout``, that a graph or a planner may use.

A hooks module like this one is what a plugin distribution names in its ``pyproject.toml``
(``[project.entry-points.grapharc]  my-plugin = "shout_plugin"``); ``use_plugin.py`` beside
it registers it in-process instead, with ``grapharc.testing``'s helpers, as a plugin's own
tests do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from grapharc.planner import CostEstimate, NodeSpec
from grapharc.plugins import hookimpl


def build_shout(*_: Any) -> Callable[[Any], dict[str, str]]:
    """The kind's factory builds the node's body; a graph or a proposal can only name the kind."""

    def shout(state: Any) -> dict[str, str]:
        return {"shouted": f"{state.goal.upper()}!"}

    return shout


@hookimpl
def register_node_kinds(register: Callable[[NodeSpec], None]) -> None:
    """Register ``shout``: it calls no model (worst case 0 tokens) and writes a ``shouted`` string."""
    register(NodeSpec(name="shout", factory=build_shout, worst_case=CostEstimate(tokens=0),
                      writes={"shouted": str}))
