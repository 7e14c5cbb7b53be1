"""Assembling a declared graph into LangGraph's: the topology checked as a whole, each node and
router wired in its governed runnable, and the types the graph's checkpoints may hold.

``GraphARC.compile()`` (``grapharc.runtime.graph``) calls these on the graph it collected.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from langchain_core.runnables import Runnable
from langgraph.graph import StateGraph as LangGraphStateGraph
from pydantic import BaseModel

from grapharc.runtime.compiled import CompiledGraphARC
from grapharc.runtime.errors import GraphBuildError
from grapharc.runtime.fanout import FanOut
from grapharc.runtime.node import (
    AsyncBody,
    Body,
    DeclaredNode,
    GovernedRunnable,
    function_bodies,
    governed_runnable,
)
from grapharc.runtime.node_output import GraphFacts
from grapharc.runtime.routing import RouteCheck, governed_router
from grapharc.runtime.serde import annotation_hints
from grapharc.runtime.state import StateContract
from grapharc.runtime.subgraph import subgraph_bodies
from grapharc.runtime.topology import check_acyclic, check_write_conflicts


@dataclass(frozen=True, slots=True)
class Route:
    """A conditional edge (or a fan-out's router) as ``GraphARC`` recorded it."""

    source: str
    router: Callable[..., Any]
    mapping: dict[Hashable, str] | None
    path_map: Any
    copy_state: bool
    is_async: bool


class GraphShape(Protocol):
    """What assembly reads of a ``GraphARC`` (``grapharc.runtime.graph``), which has these fields."""

    name: str
    dag: bool
    nodes: dict[str, DeclaredNode]
    edges: list[tuple[str, str]]
    joins: list[tuple[tuple[str, ...], str]]
    routes: list[Route]
    fanouts: dict[str, FanOut]


def checkpointed_hints(state: type[BaseModel], nodes: Mapping[str, DeclaredNode]) -> Iterator[Any]:
    """The type hints a graph's checkpoints hold values of: its state, each fan-out worker's
    annotations (its item travels in a checkpointed Send), and the same for hosted subgraphs."""
    yield state
    for spec in nodes.values():
        if isinstance(spec.fn, CompiledGraphARC):
            yield from checkpointed_hints(spec.fn.contract.schema, spec.fn.nodes)
        elif spec.fresh_input:
            yield from annotation_hints(spec.fn)


def check_topology(graph: GraphShape, contract: StateContract) -> None:
    """Refuse what only the whole graph shows: writes that may collide in one superstep, a
    fan-out or subgraph whose writes a reducer would merge wrongly, a cycle in a dag graph."""
    writes = {name: spec.writes for name, spec in graph.nodes.items()}
    check_write_conflicts(graph.edges, writes, contract.reducer_fields)
    for fan in graph.fanouts.values():
        if fan.into not in contract.reducer_fields:
            raise GraphBuildError(
                f"fan-out {fan.name!r} appends outcomes to {fan.into!r}, which has no "
                "reducer, so parallel workers would collide",
                hint=f"declare {fan.into!r} as Annotated[list[WorkerOutcome], operator.add]",
            )
    for spec in graph.nodes.values():
        if isinstance(spec.fn, CompiledGraphARC):
            merged = sorted(spec.writes & contract.reducer_fields)
            if merged:
                raise GraphBuildError(
                    f"subgraph node {spec.name!r} declares writes to {merged[0]!r}, which "
                    "has a reducer; a subgraph returns whole values, so they would be "
                    "merged twice",
                    hint="let a plain node fold the subgraph's result into that field",
                )
    if graph.dag:
        edges = list(graph.edges)
        edges += [(source, target) for sources, target in graph.joins for source in sources]
        check_acyclic(graph.name, edges)


def wire(graph: GraphShape, builder: LangGraphStateGraph[Any], contract: StateContract) -> None:
    """Add the graph's nodes, edges, joins and routes to LangGraph's ``builder``, each node and
    router in its governed runnable."""
    routers: dict[str, int] = {}
    for route in graph.routes:
        routers[route.source] = routers.get(route.source, 0) + 1
    facts = GraphFacts(graph.name, contract, frozenset(graph.nodes), graph.dag, routers)
    for spec in graph.nodes.values():
        options = {k: v for k, v in spec.options.items() if v is not None}
        builder.add_node(spec.name, node_runnable(spec, facts, graph.fanouts.get(spec.name)), **options)
    for source, target in graph.edges:
        builder.add_edge(source, target)
    for sources, target in graph.joins:
        builder.add_edge(list(sources), target)
    for route in graph.routes:
        check = RouteCheck(route.source, route.mapping, frozenset(graph.nodes))
        runnable = governed_router(
            route.router,
            check,
            graph=graph.name,
            is_async=route.is_async,
            copy_state=route.copy_state,
        )
        builder.add_conditional_edges(route.source, runnable, route.path_map)


def node_runnable(spec: DeclaredNode, facts: GraphFacts, fan: FanOut | None) -> GovernedRunnable:
    """The governed runnable of one node: a fan-out's worker, a hosted subgraph, a LangChain
    Runnable or a plain function."""
    bodies: tuple[Body | None, AsyncBody | None]
    if fan is not None:
        bodies = (None, fan.async_body) if fan.is_async else (fan.sync_body, None)
    elif isinstance(spec.fn, CompiledGraphARC):
        bodies = subgraph_bodies(spec, facts)
    elif isinstance(spec.fn, Runnable):  # runs through its sync invoke (in a thread under ainvoke)
        bodies = (spec.fn.invoke, None)
    else:
        bodies = function_bodies(spec)
    return governed_runnable(spec, facts, *bodies)
