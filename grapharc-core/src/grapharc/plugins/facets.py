"""The registries plugins fill, one per hook, and how each keys its entries."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from grapharc.plugins.types import StoreInfo


@dataclass(frozen=True)
class Facet:
    """One registry: the hook that fills it, the class of item it takes, and its keys.

    ``expected`` names the class (``package.Class``) instead of importing it, so this
    bottom layer depends on no layer above it: node kinds are the planner's ``NodeSpec``.
    The class is imported when the first item is checked.
    """

    name: str
    hook: str
    label: str
    keys: Callable[[Any], Iterator[str]]
    expected: str

    def accepts(self, item: Any) -> bool:
        """Whether ``item`` is an instance of the class this registry takes."""
        module, _, class_name = self.expected.rpartition(".")
        return isinstance(item, getattr(importlib.import_module(module), class_name))


def _attr_key(attr: str) -> Callable[[Any], Iterator[str]]:
    def keys(item: Any) -> Iterator[str]:
        yield getattr(item, attr)

    return keys


def _store_keys(item: StoreInfo) -> Iterator[str]:
    for kind in sorted(item.kinds):
        yield f"{item.scheme}:{kind}"


FACETS: dict[str, Facet] = {
    facet.name: facet
    for facet in (
        Facet("node_kinds", "register_node_kinds", "node kind", _attr_key("name"),
              "grapharc.planner.NodeSpec"),
        Facet("model_backends", "register_model_backends", "model backend", _attr_key("prefix"),
              "grapharc.plugins.types.BackendInfo"),
        Facet("executors", "register_executors", "executor", _attr_key("name"),
              "grapharc.plugins.types.ExecutorInfo"),
        Facet("stores", "register_stores", "store", _store_keys,
              "grapharc.plugins.types.StoreInfo"),
        Facet("policy_sources", "register_policy_sources", "policy source", _attr_key("name"),
              "grapharc.plugins.types.PolicySourceInfo"),
        Facet("tools", "register_tools", "tool", _attr_key("name"),
              "grapharc.plugins.types.ToolInfo"),
        Facet("tool_sources", "register_tool_sources", "tool source", _attr_key("name"),
              "grapharc.plugins.types.ToolSourceInfo"),
        Facet("embedders", "register_embedders", "embedder", _attr_key("scheme"),
              "grapharc.plugins.types.EmbedderInfo"),
    )
}
