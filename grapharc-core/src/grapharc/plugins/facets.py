"""The registries plugins fill, one per hook, and how each keys its entries."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from grapharc.plugins import types


@dataclass(frozen=True)
class Facet:
    """One registry: the hook that fills it, the item type it takes, and its keys."""

    name: str
    hook: str
    label: str
    keys: Callable[[Any], Iterator[str]]
    accepts: Callable[[Any], bool]
    expected: str


def _attr_key(attr: str) -> Callable[[Any], Iterator[str]]:
    def keys(item: Any) -> Iterator[str]:
        yield getattr(item, attr)

    return keys


def _store_keys(item: types.StoreInfo) -> Iterator[str]:
    for kind in sorted(item.kinds):
        yield f"{item.scheme}:{kind}"


def _is_node_spec(item: Any) -> bool:
    from grapharc.planner.registry import NodeSpec

    return isinstance(item, NodeSpec)


def _instance_of(cls: type) -> Callable[[Any], bool]:
    return lambda item: isinstance(item, cls)


FACETS: dict[str, Facet] = {
    facet.name: facet
    for facet in (
        Facet("node_kinds", "register_node_kinds", "node kind", _attr_key("name"),
              _is_node_spec, "grapharc.planner.NodeSpec"),
        Facet("model_backends", "register_model_backends", "model backend", _attr_key("prefix"),
              _instance_of(types.BackendInfo), "grapharc.plugins.types.BackendInfo"),
        Facet("executors", "register_executors", "executor", _attr_key("name"),
              _instance_of(types.ExecutorInfo), "grapharc.plugins.types.ExecutorInfo"),
        Facet("stores", "register_stores", "store", _store_keys,
              _instance_of(types.StoreInfo), "grapharc.plugins.types.StoreInfo"),
        Facet("policy_sources", "register_policy_sources", "policy source", _attr_key("name"),
              _instance_of(types.PolicySourceInfo), "grapharc.plugins.types.PolicySourceInfo"),
        Facet("tools", "register_tools", "tool", _attr_key("name"),
              _instance_of(types.ToolInfo), "grapharc.plugins.types.ToolInfo"),
    )
}
