"""A client's ``Command(goto=..., update=...)`` checked against the graph as declared.

A governed graph refuses a ``Command`` with ``goto`` or ``update`` as run input: either would move
the thread or change its state past the node allowlists. ``directed`` checks one against where the
thread stands (the nodes due next in its checkpoint): a ``goto`` may name only a node the declared
routing of those nodes may take next (``GraphARC.routes_from``), and an ``update`` is applied as
the one node the thread stands at, so it may write only that node's declared fields, with the
state's types (``CompiledGraphARC.checked_update``). What passes is a ``DirectedCommand``, the one
kind of such ``Command`` a compiled GraphARC takes as run input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from grapharc.runtime.compiled import CompiledGraphARC, DirectedCommand
from grapharc.runtime.errors import RunInputError

if TYPE_CHECKING:
    from grapharc.runtime.graph import GraphARC


class GotoNotRoutedError(RunInputError):
    """A ``goto`` names a node the declared routing does not take from where the thread stands."""


class NowhereToStandError(RunInputError):
    """A ``goto`` or ``update`` for a thread that stands at no node (it has ended), or an update
    for one that stands at several (it cannot be applied as one node)."""


def directed(graph: GraphARC, compiled: CompiledGraphARC, snapshot: Any, *, goto: Sequence[str] = (),
             update: Mapping[str, Any] | None = None, resume: Any = None) -> DirectedCommand:
    """``Command(resume=resume, goto=goto, update=update)`` for the thread at ``snapshot``, once
    ``goto`` and ``update`` are checked (``GotoNotRoutedError``, ``NowhereToStandError``, or the
    write and type errors of ``checked_update``)."""
    at = tuple(dict.fromkeys(snapshot.next))
    if not at and (goto or update is not None):
        raise NowhereToStandError("a goto or update applies where the thread stands, and it stands at "
                                  "no node (its run has ended)", hint="start a run with input instead")
    if goto:
        _check_goto(graph, at, goto)
    checked = None
    if update is not None:
        if len(at) != 1:
            raise NowhereToStandError(f"an update is applied as the node the thread stands at, and it stands "
                                      f"at {len(at)}: {', '.join(at)}",
                                      hint="send the update when the thread stands at one node")
        checked = compiled.checked_update(update, at[0], dict(snapshot.values))
    return DirectedCommand(resume=resume, goto=list(goto), update=checked)


def _check_goto(graph: GraphARC, at: tuple[str, ...], goto: Sequence[str]) -> None:
    allowed: set[str] = set()
    for node in at:
        targets = graph.routes_from(node)
        allowed |= set(graph.nodes) if targets is None else targets
    refused = [target for target in goto if target not in allowed]
    if refused:
        raise GotoNotRoutedError(
            f"goto {', '.join(map(repr, refused))}: the graph's declared routing takes the thread from "
            f"{', '.join(at)} only to {', '.join(sorted(allowed)) or 'the end'}",
            hint="a goto may name only a node the routing of the node the thread stands at leads to")
