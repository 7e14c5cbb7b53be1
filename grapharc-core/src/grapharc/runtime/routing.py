"""Code-only routing: conditional edges whose mapping is checked where it is declared.

A router is an ordinary function over typed state. Its mapping must be non-empty and
name only nodes the graph has (or END); a router annotated ``-> Literal[...]`` or
``-> SomeEnum`` has every member held against the mapping's keys. A key the router
returns at run time that the mapping lacks raises ``GraphRoutingError`` naming the
node, the key and the keys there were, instead of a bare KeyError inside LangGraph.
What a router decided is written on its node's ``end`` event (``grapharc.runtime.route_trace``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Literal, NoReturn, get_args, get_origin, get_type_hints

from langchain_core.runnables import RunnableConfig
from langgraph.constants import END, START
from langgraph.types import Send

from grapharc.runtime import route_trace
from grapharc.runtime.errors import GraphRoutingError, RouteMappingError, quoted_names
from grapharc.runtime.node import GovernedRunnable
from grapharc.runtime.state_copy import copy_for_node


def declared_keys(router: Callable[..., Any]) -> tuple[Hashable, ...] | None:
    """The keys a router's return annotation promises (Literal or Enum members), if any."""
    try:
        hint = get_type_hints(router).get("return")
    except Exception:
        return None
    if hint is None:
        return None
    if get_origin(hint) is Literal:
        return tuple(get_args(hint))
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return tuple(hint)
    return None


def _in_mapping(key: Hashable, mapping: Mapping[Hashable, str]) -> bool:
    if key in mapping:
        return True
    return isinstance(key, enum.Enum) and key.value in mapping


def checked_mapping(
    source: str,
    router: Callable[..., Any],
    mapping: Mapping[Hashable, str] | Sequence[str] | None,
    nodes: frozenset[str],
) -> dict[Hashable, str] | None:
    """Validate a conditional edge's mapping as declared; returns it as a dict (or None)."""
    keys = declared_keys(router)
    declared: Mapping[Hashable, Hashable]
    if mapping is None:
        if keys is None:
            return None
        declared = {key: key for key in keys}
    elif isinstance(mapping, Mapping):
        declared = mapping
    else:
        declared = {name: name for name in mapping}
    if not declared:
        raise RouteMappingError(
            f"conditional edge from {source!r}: the mapping is empty",
            hint="map each key the router returns to a node or END",
        )
    targets = nodes | {END}
    checked: dict[Hashable, str] = {}
    for key, target in declared.items():
        if not isinstance(target, str) or target not in targets:
            raise RouteMappingError(
                f"conditional edge from {source!r}: key {key!r} maps to {target!r}, "
                f"which is not a node (nodes: {quoted_names(nodes)}) or END",
                hint="add the node before the edge, or fix the target",
            )
        checked[key] = target
    if keys is not None:
        missing = [key for key in keys if not _in_mapping(key, checked)]
        if missing:
            raise RouteMappingError(
                f"conditional edge from {source!r}: the router's return annotation allows "
                f"{missing!r}, which the mapping does not have (keys: {quoted_names(checked)})",
                hint="add those keys to the mapping or narrow the router's return type",
            )
    return checked


class RouteCheck:
    """Validates what a router returned against the mapping (or the graph's nodes)."""

    __slots__ = ("keys", "mapping", "nodes", "source")

    def __init__(self, source: str, mapping: dict[Hashable, str] | None, nodes: frozenset[str]) -> None:
        self.source = source
        self.mapping = mapping
        self.nodes = nodes
        self.keys = frozenset(mapping) if mapping is not None else nodes | {END}

    def __call__(self, result: Any) -> Any:
        """Return ``result`` (Enum members translated to their mapped value) or raise."""
        if isinstance(result, (list, tuple)):
            return [self.one(item) for item in result]
        return self.one(result)

    def destinations(self, result: Any) -> tuple[Any, list[str]]:
        """(the key(s) as the trace records them, the node names they lead to) of a checked result."""
        items = result if isinstance(result, list) else [result]
        keys = [item.node if isinstance(item, Send) else item for item in items]
        mapping = self.mapping
        targets = [key if isinstance(item, Send) or mapping is None else mapping[key]
                   for key, item in zip(keys, items, strict=True)]
        return (keys if isinstance(result, list) else keys[0]), targets

    def one(self, item: Any) -> Any:
        """Check a single destination: a key, a node name or a Send."""
        if isinstance(item, Send):
            if item.node not in self.nodes:
                raise GraphRoutingError(self.source, item.node, self.nodes)
            return item
        try:
            known = item in self.keys
        except TypeError:
            known = False
        if known:
            return item
        if isinstance(item, enum.Enum) and item.value in self.keys:
            return item.value
        raise GraphRoutingError(self.source, item, self.keys)


def governed_router(
    router: Callable[..., Any],
    check: RouteCheck,
    *,
    graph: str,
    is_async: bool,
    copy_state: bool,
) -> GovernedRunnable:
    """The runnable LangGraph calls for a conditional edge: copy in, checked key out, and the
    decision recorded on the source node's ``end`` event.

    A sync router runs inline under the async entry points too: routers are plain code
    over state, so a hop to a thread pool would cost more than the routing.
    """
    name = f"route:{check.source}"
    traced = check.source != START

    def failed(config: RunnableConfig, exc: BaseException) -> NoReturn:
        if traced:
            route_trace.fail(config, exc)
        raise exc

    def released(config: RunnableConfig, result: Any) -> Any:
        if traced:
            route_trace.release(config, *check.destinations(result))
        return result

    if is_async:

        async def aroute(state: Any, config: RunnableConfig) -> Any:
            try:
                result = check(await router(copy_for_node(state) if copy_state else state))
            except BaseException as exc:
                failed(config, exc)
            return released(config, result)

        return GovernedRunnable(name, graph, None, aroute)

    def route(state: Any, config: RunnableConfig) -> Any:
        try:
            result = check(router(copy_for_node(state) if copy_state else state))
        except BaseException as exc:
            failed(config, exc)
        return released(config, result)

    return GovernedRunnable(name, graph, route, None, offload=False)
