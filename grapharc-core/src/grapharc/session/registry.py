"""The graphs this process can drive sessions of, with their gates and approvers.

Topology comes from code: a session names a registered graph and nothing else, and a
process that has not registered a session's graph refuses to drive it
(``UnknownGraphError``) rather than guess. A registration keeps the GraphARC builder,
so the graph is compiled once per checkpointer (sync and async) with its gated nodes
passed to LangGraph's ``interrupt_before``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from grapharc.runtime.compiled import CompiledGraphARC
from grapharc.runtime.graph import GraphARC
from grapharc.session.approvals import (
    Approvers,
    Gate,
    Hold,
    Shown,
    asks_for_decision,
    gate_hold,
    interrupt_hold,
)
from grapharc.session.errors import SessionError, UnknownGraphError


@dataclass(frozen=True)
class RegisteredGraph:
    """A graph sessions can run: the builder, its gates, who answers its interrupts, its inbox."""

    builder: GraphARC
    gates: Mapping[str, Gate] = field(default_factory=dict)
    approvers: Mapping[str, Approvers] = field(default_factory=dict)
    inbox: str | None = None
    outcome: Callable[[dict[str, Any]], str] | None = None

    @property
    def name(self) -> str:
        return self.builder.name

    def compile(self, checkpointer: Any) -> CompiledGraphARC:
        """The governed graph over ``checkpointer``, held before every gated node; its budget
        bounds the whole thread, so a pause, an approval or a crash cannot reset it."""
        return self.builder.compile(checkpointer=checkpointer, interrupt_before=sorted(self.gates) or None,
                                    budget_scope="thread")

    def shown_fields(self, node: str) -> tuple[Shown, ...] | None:
        """The state fields ``node``'s approvers are shown (its gate's, else its approvers');
        None: it declares none, so they see the fields the path so far wrote."""
        gate = self.gates.get(node)
        approvers = gate.approvers if gate is not None else self.approvers.get(node)
        return approvers.shown() if approvers is not None else None

    def asks_for_decision(self, node: str, value: Any) -> bool:
        """Whether ``node``'s ``interrupt(value)`` asks for a decision, not any answer
        (``grapharc.session.approvals.asks_for_decision``)."""
        return asks_for_decision(value, self.approvers.get(node))

    def holds(self, snapshot: Any) -> list[Hold]:
        """What the thread at ``snapshot`` waits on: its interrupts, then its gated nodes."""
        checkpoint_id = snapshot.config["configurable"].get("checkpoint_id", "")
        holds: list[Hold] = []
        for task in snapshot.tasks:
            approvers = self.approvers.get(task.name, Approvers())
            holds.extend(interrupt_hold(task.name, i.id, i.value, approvers) for i in task.interrupts)
        for task in snapshot.tasks:
            gate = self.gates.get(task.name)
            if gate is not None and task.result is None and not task.interrupts and task.error is None:
                holds.append(gate_hold(task.name, gate, checkpoint_id, dict(snapshot.values)))
        return holds


class GraphRegistry:
    """Registered graphs by name, and their compiled forms per checkpointer."""

    def __init__(self) -> None:
        self._graphs: dict[str, RegisteredGraph] = {}
        self._compiled: dict[tuple[str, Any], CompiledGraphARC] = {}

    def add(self, graph: RegisteredGraph) -> None:
        """Register ``graph``; its gates, approvers and inbox must name what it has."""
        if graph.name in self._graphs:
            raise SessionError(f"a graph named {graph.name!r} is already registered")
        nodes = graph.builder.nodes
        for kind, names in (("gate", graph.gates), ("approvers entry", graph.approvers)):
            for node in names:
                if node not in nodes:
                    raise SessionError(
                        f"{kind} names node {node!r}, which graph {graph.name!r} does not have; "
                        f"its nodes: {', '.join(sorted(nodes))}")
        declared = [(f"gate {node!r}", gate.approvers) for node, gate in graph.gates.items()]
        declared += [(f"approvers of {node!r}", approvers) for node, approvers in graph.approvers.items()]
        for where, approvers in declared:
            unknown = [s.field for s in approvers.shown() or () if s.field not in graph.builder.fields]
            if unknown:
                fields = ", ".join(sorted(graph.builder.fields))
                raise SessionError(f"{where} shows {', '.join(map(repr, unknown))}, not a state field of "
                                   f"graph {graph.name!r}; its fields: {fields}")
        if graph.inbox is not None and graph.inbox not in graph.builder.fields:
            raise SessionError(f"inbox {graph.inbox!r} is not a state field of graph {graph.name!r}")
        self._graphs[graph.name] = graph

    def get(self, name: str, thread_id: str | None = None) -> RegisteredGraph:
        """The registration for ``name``; ``UnknownGraphError`` if this process has none."""
        graph = self._graphs.get(name)
        if graph is None:
            whose = f"thread {thread_id} runs graph" if thread_id else "graph"
            known = ", ".join(sorted(self._graphs)) or "none"
            raise UnknownGraphError(f"{whose} {name!r}, which is not registered in this process "
                                    f"(registered: {known})",
                                    hint="register the graph with SessionManager.register before driving it")
        return graph

    def names(self) -> list[str]:
        """The registered graphs' names, sorted."""
        return sorted(self._graphs)

    def compiled(self, name: str, checkpointer: Any) -> CompiledGraphARC:
        """``name`` compiled over ``checkpointer`` (once per checkpointer)."""
        key = (name, checkpointer)
        if key not in self._compiled:
            self._compiled[key] = self.get(name).compile(checkpointer)
        return self._compiled[key]

    def forget(self, checkpointer: Any) -> None:
        """Drop the graphs compiled over ``checkpointer`` (it is being closed)."""
        for key in [key for key in self._compiled if key[1] is checkpointer]:
            del self._compiled[key]
