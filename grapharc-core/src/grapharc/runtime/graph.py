"""The graph builder: LangGraph's StateGraph with the discipline declared up front.

``GraphARC(State, name=, budget=, dag=, trace=, config_schema=, context_schema=)`` collects
nodes (each with the fields it may write), edges, conditional edges and fan-outs, checking
each where it is declared; ``compile()`` checks the topology as a whole and builds the
LangGraph graph with every node and router inside a governed wrapper (see
``grapharc.runtime.assembly`` and ``grapharc.runtime.node``).
``StateGraph`` is the seed quick start's spelling of the same builder.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from os import PathLike
from typing import Any, Literal, Self

from langchain_core.runnables import Runnable
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.constants import END, START
from langgraph.graph import StateGraph as LangGraphStateGraph
from langgraph.types import All
from pydantic import BaseModel

from grapharc.runtime.assembly import Route, check_topology, checkpointed_hints, wire
from grapharc.runtime.budget import Budget
from grapharc.runtime.caller_config import declared_configurable, declared_context
from grapharc.runtime.compiled import CompiledGraphARC
from grapharc.runtime.errors import (
    DagViolationError,
    GraphBuildError,
    UnknownFieldError,
    UnknownNodeError,
)
from grapharc.runtime.fanout import FanOut
from grapharc.runtime.node import DeclaredNode
from grapharc.runtime.routing import checked_mapping
from grapharc.runtime.serde import allowlisted, checkpoint_allowlist
from grapharc.runtime.state import StateContract, channel_reducers
from grapharc.runtime.thread_spend import SpendStampingSaver
from grapharc.runtime.traced_store import traced_store
from grapharc.trace.writer import TraceWriter

__all__ = ["END", "START", "GraphARC", "StateGraph"]

# What a node runs: a function (sync or async), a LangChain Runnable, or a compiled GraphARC
# (hosted as a subgraph).
NodeBody = Callable[..., Any] | Runnable[Any, Any] | CompiledGraphARC

_ALIASES = {"START": START, "END": END}
_RESERVED = frozenset({START, END, "START", "END"})


def _is_async(fn: Any) -> bool:
    """True for ``async def`` functions and objects whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(fn):
        return True
    call = inspect.getattr_static(type(fn), "__call__", None)
    return inspect.iscoroutinefunction(call)


def _has_parameter(fn: Any, name: str) -> bool:
    """True if ``fn`` has a parameter called ``name`` (read off the code object when it can)."""
    code = getattr(fn, "__code__", None)
    if code is not None and not hasattr(fn, "__wrapped__"):
        return name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


class GraphARC:
    """A LangGraph StateGraph whose nodes declare their writes and run under a budget and a trace.

    ``state`` is a pydantic model (subclass ``GraphARCState`` to forbid extra fields);
    ``budget`` bounds every run; ``dag=True`` refuses conditional edges, fan-outs and
    cycles; ``trace`` is a JSONL path or a ``TraceWriter`` (None writes nothing).
    ``config_schema`` and ``context_schema`` (pydantic models) declare what a run's caller may
    set: the keys of ``config["configurable"]`` a node reads, and the run's static context
    (LangGraph's ``context_schema``: a node reads it with ``get_runtime().context``); see
    ``grapharc.runtime.caller_config``.
    """

    _writes_default_all = False

    def __init__(
        self,
        state: type[BaseModel],
        *,
        name: str | None = None,
        budget: Budget | None = None,
        dag: bool = False,
        trace: str | PathLike[str] | TraceWriter | None = None,
        config_schema: type[BaseModel] | None = None,
        context_schema: type[BaseModel] | None = None,
    ) -> None:
        if not (isinstance(state, type) and issubclass(state, BaseModel)):
            raise GraphBuildError(
                f"state must be a pydantic model class, got {state!r}",
                hint="subclass grapharc.GraphARCState",
            )
        self.state = state
        self.config_schema = declared_configurable(config_schema)
        self.context_schema = declared_context(context_schema)
        self.name = name or state.__name__
        self.budget = budget or Budget()
        self.dag = dag
        self.trace = trace
        self.fields = frozenset(state.model_fields)
        self.nodes: dict[str, DeclaredNode] = {}
        self.edges: list[tuple[str, str]] = []
        self._sources: set[str] = set()
        self.joins: list[tuple[tuple[str, ...], str]] = []
        self.routes: list[Route] = []
        self.fanouts: dict[str, FanOut] = {}

    def add_node(
        self,
        name: str | NodeBody,
        fn: NodeBody | None = None,
        *,
        writes: Iterable[str] | None = None,
        copy_state: bool = True,
        retry_policy: Any = None,
        cache_policy: Any = None,
        defer: bool = False,
        metadata: dict[str, Any] | None = None,
        destinations: dict[str, str] | tuple[str, ...] | None = None,
    ) -> Self:
        """Add a node that may write exactly the fields in ``writes``.

        ``fn`` takes the state (and ``config`` if it has a parameter of that name) and
        returns a dict of writes, a ``Command`` or None; it may be ``async def``, a
        LangChain Runnable or a compiled GraphARC (a subgraph). It receives a deep copy
        of the state; ``copy_state=False`` hands it LangGraph's instance instead, for
        states too large to copy every step: in-place mutation then goes unchecked, and
        the node's trace events say ``"copy": "shared"``. ``retry_policy``,
        ``cache_policy``, ``defer``, ``metadata`` and ``destinations`` go to LangGraph.
        """
        body = name if fn is None else fn
        label = getattr(name, "__name__", None) if fn is None else name
        if not isinstance(label, str) or not label:
            raise GraphBuildError(f"add_node: a node needs a name, got {label!r}")
        name = label
        self._check_new_node(name)
        if writes is None:
            declared = self.fields if self._writes_default_all else frozenset()
        else:
            declared = frozenset([writes] if isinstance(writes, str) else writes)
            for field in sorted(declared):
                if field not in self.fields:
                    raise UnknownFieldError(f"add_node({name!r}) writes=", field, self.fields)
        if isinstance(body, CompiledGraphARC):
            is_async, wants_config, wants_store = body.has_async, False, False
        else:
            plain = not isinstance(body, Runnable)
            is_async = plain and _is_async(body)
            wants_config = plain and _has_parameter(body, "config")
            wants_store = plain and _has_parameter(body, "store")
        self.nodes[name] = DeclaredNode(
            name=name,
            fn=body,
            writes=declared,
            copy_state=copy_state,
            is_async=is_async,
            wants_config=wants_config,
            wants_store=wants_store,
            options={
                "retry_policy": retry_policy,
                "cache_policy": cache_policy,
                "defer": defer,
                "metadata": metadata,
                "destinations": destinations,
            },
        )
        return self

    def add_edge(self, source: str | Sequence[str], target: str) -> Self:
        """Add a plain edge; a list of sources waits for all of them (a join)."""
        target = self._known(f"add_edge(..., {target!r})", target, allow_end=True)
        if isinstance(source, str):
            source = self._known(f"add_edge({source!r}, ...)", source, allow_start=True)
            if self.dag and source in self._sources:
                raise DagViolationError(
                    f"dag graph {self.name!r}: {source!r} already has an outgoing edge; "
                    f"adding one to {target!r} would fan out",
                    hint="chain the nodes, or declare the graph without dag=True",
                )
            self.edges.append((source, target))
            self._sources.add(source)
        else:
            sources = tuple(
                self._known(f"add_edge({list(source)!r}, ...)", item, allow_start=True) for item in source
            )
            self.joins.append((sources, target))
        return self

    def add_conditional_edge(
        self,
        source: str,
        router: Callable[..., Any],
        mapping: Mapping[Hashable, str] | Sequence[str] | None = None,
        *,
        copy_state: bool = True,
    ) -> Self:
        """Route after ``source`` by calling ``router(state)``; ``mapping`` maps its keys to nodes.

        The mapping is checked here (see ``grapharc.runtime.routing``); a key the router
        returns at run time that it lacks raises GraphRoutingError.
        """
        source = self._known(f"add_conditional_edge({source!r}, ...)", source, allow_start=True)
        self._refuse_in_dag(f"the conditional edge from {source!r}", "branch")
        checked = checked_mapping(source, router, mapping, frozenset(self.nodes))
        self.routes.append(Route(source, router, checked, checked, copy_state, _is_async(router)))
        return self

    def add_conditional_edges(
        self,
        source: str,
        path: Callable[..., Any],
        path_map: Mapping[Hashable, str] | Sequence[str] | None = None,
    ) -> Self:
        """LangGraph's spelling of ``add_conditional_edge``."""
        return self.add_conditional_edge(source, path, path_map)

    def add_fanout(
        self,
        name: str,
        worker: Callable[[Any], Any],
        *,
        after: str,
        over: Callable[[Any], Iterable[Any]],
        into: str,
        then: str,
        timeout: float | None = None,
    ) -> Self:
        """After ``after``, run ``worker(item)`` once per item of ``over(state)``, isolated.

        Outcomes (value, or ``crashed`` / ``timed_out`` with the cause) are appended to
        the reducer field ``into``; ``then`` runs once all workers have finished. See
        ``grapharc.runtime.fanout``.
        """
        self._refuse_in_dag(f"the fan-out {name!r}", "fan-out")
        after = self._known(f"add_fanout({name!r}, after=...)", after, allow_start=True)
        then = self._known(f"add_fanout({name!r}, then=...)", then, allow_end=True)
        if into not in self.fields:
            raise UnknownFieldError(f"add_fanout({name!r}) into=", into, self.fields)
        self._check_new_node(name)
        fan = FanOut(name, worker, after, over, into, then, timeout, _is_async(worker))
        self.fanouts[name] = fan
        self.nodes[name] = DeclaredNode(
            name=name, fn=worker, writes=frozenset({into}), fresh_input=True, is_async=fan.is_async
        )
        self.routes.append(Route(after, fan.router, mapping=None, path_map=[then], copy_state=True,
                                  is_async=False))
        self.edges.append((name, then))
        return self

    def compile(
        self,
        checkpointer: Any = None,
        *,
        cache: Any = None,
        store: Any = None,
        interrupt_before: All | list[str] | None = None,
        interrupt_after: All | list[str] | None = None,
        debug: bool = False,
        budget_scope: Literal["run", "thread"] = "run",
        trace_store_values: bool = False,
    ) -> CompiledGraphARC:
        """Check the topology and build the governed LangGraph graph.

        ``cache`` and the interrupt lists go straight to LangGraph's
        ``StateGraph.compile()``; so does ``checkpointer``, as a copy whose serializer
        allowlists every class the state can hold (see ``grapharc.runtime.serde``), and
        ``store`` (any ``BaseStore``, such as ``grapharc.memory.longterm.open_long_term_store``'s),
        in a ``TracedStore`` that puts every write a node makes on the trace: its namespace,
        key and size, and its value too when ``trace_store_values`` (see
        ``grapharc.runtime.traced_store``). A node reaches the store through a ``store``
        parameter or ``langgraph.config.get_store()``.
        ``budget_scope="thread"`` makes the budget bound a checkpointed thread across its
        attempts rather than each run (``grapharc.runtime.thread_spend``).
        """
        if budget_scope not in ("run", "thread"):
            raise GraphBuildError(f"budget_scope must be 'run' or 'thread', got {budget_scope!r}")
        allowlist = checkpoint_allowlist(*checkpointed_hints(self.state, self.nodes))
        checkpointer = allowlisted(checkpointer, allowlist)
        thread_metered = budget_scope == "thread" and isinstance(checkpointer, BaseCheckpointSaver)
        if thread_metered:
            checkpointer = SpendStampingSaver(checkpointer)
        builder: LangGraphStateGraph[Any, Any, Any, Any] = LangGraphStateGraph(
            self.state, context_schema=self.context_schema)
        contract = StateContract(self.state, channel_reducers(builder.channels))
        check_topology(self, contract)
        wire(self, builder, contract)
        inner = builder.compile(
            checkpointer=checkpointer,
            cache=cache,
            store=traced_store(store, graph=self.name, values=trace_store_values),
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            debug=debug,
            name=self.name,
        )
        for spec in self.nodes.values():
            if isinstance(spec.fn, CompiledGraphARC):  # so get_state(subgraphs=True) finds it
                inner.nodes[spec.name].subgraphs = [spec.fn.inner]
        async_parts = {spec.name for spec in self.nodes.values() if spec.is_async}
        async_parts |= {f"route:{route.source}" for route in self.routes if route.is_async}
        return CompiledGraphARC(
            inner,
            name=self.name,
            contract=contract,
            budget=self.budget,
            trace=self.trace,
            nodes=self.nodes,
            async_parts=frozenset(async_parts),
            checkpointer=checkpointer,
            edges=self.declared_edges(),
            thread_metered=thread_metered,
        )

    def declared_edges(self) -> list[list[str]]:
        """Every declared edge as ``[source, target]`` (a join gives one per source), as
        ``run_start`` records them so a viewer can tell which execution led to which."""
        edges = [[source, target] for source, target in self.edges]
        edges += [[source, target] for sources, target in self.joins for source in sources]
        return edges

    def routes_from(self, source: str) -> frozenset[str] | None:
        """The nodes the declared routing may take next from ``source`` (START, or a node): its
        edges, joins, conditional edges' mappings and declared ``destinations``; None when a router
        of it declares no targets (it may then go to any node)."""
        targets = {target for edge_source, target in self.edges if edge_source == source}
        targets |= {target for sources, target in self.joins if source in sources}
        for route in self.routes:
            if route.source != source:
                continue
            if route.mapping is not None:
                targets |= set(route.mapping.values())
            elif isinstance(route.path_map, list | tuple):
                targets |= set(route.path_map)
            else:
                return None
        declared = self.nodes[source].options.get("destinations") if source in self.nodes else None
        targets |= set(declared or ())
        return frozenset(targets - {END})

    def _refuse_in_dag(self, what: str, earned: str) -> None:
        """A dag graph routes only along its declared edges, so it refuses ``what``."""
        if self.dag:
            raise DagViolationError(f"dag graph {self.name!r} refuses {what}",
                                    hint=f"declare the graph without dag=True once the {earned} is earned")

    def _check_new_node(self, name: str) -> None:
        if name in _RESERVED:
            raise GraphBuildError(f"add_node: {name!r} is reserved for the graph's entry/exit")
        if "|" in name or ":" in name:
            raise GraphBuildError(f"add_node: node name {name!r} may not contain '|' or ':'")
        if name in self.nodes:
            raise GraphBuildError(f"add_node: graph {self.name!r} already has a node {name!r}")

    def _known(self, where: str, name: str, *, allow_start: bool = False, allow_end: bool = False) -> str:
        name = _ALIASES.get(name, name)
        if name in self.nodes or (allow_start and name == START) or (allow_end and name == END):
            return name
        if name == END:
            raise GraphBuildError(f"{where}: END cannot be the source of an edge")
        if name == START:
            raise GraphBuildError(f"{where}: START cannot be the target of an edge")
        raise UnknownNodeError(where, name, self.nodes)


class StateGraph(GraphARC):
    """The seed quick start's spelling: ``StateGraph(State)`` with string "START"/"END" edges.

    Unlike ``GraphARC``, a node added without ``writes=`` may write any state field
    (still type-checked), so LangGraph-style code runs unchanged; declare ``writes=``
    to narrow it.
    """

    _writes_default_all = True
