"""Materialisation: an admitted proposal, and only that proposal, becomes a compiled graph.

``Materializer.materialize(admitted, proposal)`` binds by fingerprint: a result
that authorised anything else (or rejected this) raises ``NotAdmitted``. Bodies
come from the registry's factories, never the proposal; a kind with an
``args_schema`` gets the args admission validated (``factory(spec, args)``),
any other kind gets none (``factory(spec)``). Writes come from ``writes`` (else
the spec's ``writes``); a kind nobody declared writes for may write nothing.
``Materializer.target`` is what it builds against; an ``AdmissionChecker`` given the
same target admits only what this can build.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from grapharc.errors import GraphARCError
from grapharc.planner.build_target import BuildTarget
from grapharc.planner.nesting import deeper
from grapharc.planner.proposal import END, Subgraph
from grapharc.planner.registry import NodeRegistry
from grapharc.planner.verdict import AdmissionResult
from grapharc.runtime.budget import Budget
from grapharc.runtime.graph import GraphARC
from grapharc.trace.writer import TraceWriter


class NotAdmitted(GraphARCError):
    """An attempt to build something an admission result did not authorise."""


def _at_level(body: Callable[..., Any], level: int) -> Callable[..., Any]:
    """Wrap a body so it runs ``level`` admitted levels deeper (what the depth check counts)."""
    if inspect.iscoroutinefunction(body):
        async def run_async(state: Any) -> Any:
            with deeper(level):
                return await body(state)

        return run_async

    def run(state: Any) -> Any:
        with deeper(level):
            return body(state)

    return run


class Materializer:
    """Builds compiled graphs from admitted proposals over one registry and state schema."""

    def __init__(self, registry: NodeRegistry, state_schema: type[BaseModel],
                 writes: Mapping[str, Iterable[str]] | None = None, *,
                 trace: TraceWriter | None = None, name: str = "admitted") -> None:
        self.registry = registry
        self.state_schema = state_schema
        self.target = BuildTarget.of(registry, state_schema, writes)
        self.trace = trace
        self.name = name

    def materialize(self, admitted: AdmissionResult, proposal: Subgraph, *,
                    budget: Budget | None = None) -> Any:
        """The compiled graph for ``proposal``, if ``admitted`` authorised exactly it."""
        if not isinstance(admitted, AdmissionResult) or not admitted.admitted:
            raise NotAdmitted("this proposal was not admitted; nothing is built",
                              hint="run AdmissionChecker.check() and materialise only admitted results")
        actual = proposal.fingerprint()
        if actual != admitted.fingerprint:
            raise NotAdmitted(f"the admission authorised proposal {admitted.fingerprint[:12]}, "
                              f"not {actual[:12]}; nothing is built")
        return self._build(proposal, admitted.args, self.name, "", 1, budget or Budget()).compile()

    def _build(self, scope: Subgraph, args: Mapping[str, BaseModel], name: str, prefix: str,
               level: int, budget: Budget) -> GraphARC:
        graph = GraphARC(self.state_schema, name=name, budget=budget, trace=self.trace)
        for node in scope.nodes:
            if node.subgraph is not None:
                inner = self._build(node.subgraph, args, f"{name}.{node.name}",
                                    f"{prefix}{node.name}.", level + 1, budget)
                fields = frozenset().union(*(spec.writes for spec in inner.nodes.values()))
                graph.add_node(node.name, inner.compile(), writes=fields)
                continue
            spec = self.registry.get(node.kind)
            body = spec.factory(spec) if spec.args_schema is None \
                else spec.factory(spec, args[f"{prefix}{node.name}"])
            graph.add_node(node.name, _at_level(body, level),
                           writes=self.target.writes_of(node.kind))
        has_out = set()
        for edge in scope.edges:
            graph.add_edge(edge.source, edge.target)
            has_out.add(edge.source)
        for node in scope.nodes:
            if node.name not in has_out:
                graph.add_edge(node.name, END)
        return graph
