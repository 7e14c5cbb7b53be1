"""What a node returned, checked before LangGraph applies it: every write against the node's
allowlist and the state's types, a ``Command``'s update and goto, and a subgraph's
``Command(graph=PARENT)`` landing on the node that hosts it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.constants import END
from langgraph.errors import ParentCommand
from langgraph.types import Command, Send

from grapharc.runtime.errors import DagViolationError, GraphRoutingError, NodeOutputError
from grapharc.runtime.state import StateContract
from grapharc.trace import schema as schema


@dataclass(frozen=True, slots=True)
class GraphFacts:
    """What a node wrapper needs to know about the graph it runs in; ``routers`` counts the
    conditional edges (and fan-outs) leaving each node."""

    name: str
    contract: StateContract
    nodes: frozenset[str]
    dag: bool
    routers: Mapping[str, int] = field(default_factory=dict)
    targets: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "targets", self.nodes | {END})


class Settler:
    """Turns what a node returned into what LangGraph may apply, checking every write."""

    __slots__ = ("contract", "dag", "declared", "graph", "node", "schema", "targets")

    def __init__(self, node: str, declared: frozenset[str], facts: GraphFacts) -> None:
        self.node = node
        self.declared = declared
        self.contract = facts.contract
        self.schema = facts.contract.schema
        self.targets = facts.targets
        self.dag = facts.dag
        self.graph = facts.name

    def __call__(self, out: Any, state: Any) -> tuple[Any, dict[str, Any], dict[str, Any] | None]:
        """(value for LangGraph, state delta for the trace, extra trace fields)."""
        if isinstance(out, dict):
            current = state if isinstance(state, self.schema) else None
            writes = self.contract.check_writes(self.node, self.declared, out, current)
            return writes, writes, None
        if out is None:
            return None, {}, None
        if isinstance(out, Command):
            return self.command(out, state)
        raise NodeOutputError(self.node, out)

    def command(
        self, cmd: Command[Any], state: Any
    ) -> tuple[Command[Any], dict[str, Any], dict[str, Any] | None]:
        """Check a Command's update like any write and its goto against the graph's nodes."""
        if cmd.graph == Command.PARENT:  # addressed to the parent; the hosting node checks it
            return cmd, {}, None
        writes = self.update_writes(cmd.update, state)
        goto = self.check_goto(cmd.goto)
        extra = {schema.GOTO: goto} if goto else None
        return dataclasses.replace(cmd, update=writes or None), writes, extra

    def update_writes(self, update: Any, state: Any) -> dict[str, Any]:
        """The checked writes of a Command's ``update`` (a dict or (field, value) pairs)."""
        if update is None:
            return {}
        if isinstance(update, (list, tuple)) and all(
            isinstance(pair, tuple) and len(pair) == 2 for pair in update
        ):
            update = dict(update)
        if not isinstance(update, dict):
            raise NodeOutputError(self.node, update)
        current = state if isinstance(state, self.schema) else None
        return self.contract.check_writes(self.node, self.declared, update, current)

    def check_goto(self, goto: Any) -> list[str]:
        """Validate Command(goto=...) targets; returns their names for the trace."""
        targets = goto if isinstance(goto, (list, tuple)) else ([goto] if goto else [])
        names: list[str] = []
        for target in targets:
            name = target.node if isinstance(target, Send) else target
            if name not in self.targets:
                raise GraphRoutingError(self.node, name, self.targets)
            names.append(name)
        if names and self.dag:
            raise DagViolationError(
                f"node {self.node!r} returned Command(goto={names!r}) in dag graph "
                f"{self.graph!r}, which routes only along its declared edges",
                hint="add the edge to the graph instead of routing dynamically",
            )
        return names


def recast_ns(ns: str) -> str:
    """A checkpoint namespace without its task ids (as LangGraph addresses parent commands)."""
    return "|".join(part.split(":")[0] for part in ns.split("|") if not part.isdigit())


def check_parent_command(settle: Settler, bubble: ParentCommand, state: Any, config: RunnableConfig) -> None:
    """Check a subgraph's Command(graph=PARENT) that lands on this (hosting) node, in place."""
    cmd = bubble.args[0]
    ns = config.get("configurable", {}).get("checkpoint_ns", "")
    if cmd.graph not in (ns, recast_ns(ns), settle.node):
        return
    writes = settle.update_writes(cmd.update, state)
    settle.check_goto(cmd.goto)
    bubble.args = (dataclasses.replace(cmd, update=writes or None),)
