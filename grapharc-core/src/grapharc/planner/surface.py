"""A planning surface: the registry named by ``--registry`` and what its module declares beside it.

``module:attr`` names a ``NodeRegistry`` (or a callable returning one); the
module may declare ``STATE_SCHEMA``, ``WRITES``, ``DEFAULT_POLICY``,
``goal_reached`` and ``scripted_planner``. The name ``plugins`` is every kind
installed plugins registered (the stdlib's among them), with the stdlib's state,
writes and default policy: the zero-configuration surface.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from grapharc.errors import GraphARCError
from grapharc.planner.registry import NodeRegistry, NodeSpec

PLUGINS = "plugins"
DEMO = "grapharc.examples.plan_incident:build_registry"


class RegistrySpecError(GraphARCError):
    """A ``--registry`` value that does not name a usable registry."""

    hint = "use module:attr naming a NodeRegistry or a function returning one, or 'plugins'"


@dataclass(frozen=True)
class Surface:
    """A frozen registry and the state, writes, policy and planner declared with it."""

    spec: str
    registry: NodeRegistry
    state_schema: type | None
    writes: Mapping[str, frozenset[str]]
    default_policy: dict[str, Any] | None
    goal_reached: Callable[[Any], bool] | None
    scripted_planner: Callable[[], Any] | None
    sources: Mapping[str, str] = field(default_factory=dict)


def load_surface(spec: str) -> Surface:
    """Import and describe the surface ``spec`` names; errors name the module and attribute."""
    if spec == PLUGINS:
        return _plugins_surface()
    module_name, colon, attr = spec.partition(":")
    if not colon or not module_name or not attr:
        raise RegistrySpecError(f"registry {spec!r} is not of the form module:attr")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise RegistrySpecError(f"registry {spec!r}: cannot import {module_name!r}: {exc}") from None
    target = getattr(module, attr, None)
    if target is None:
        raise RegistrySpecError(f"registry {spec!r}: module {module_name!r} has no {attr!r}")
    registry = target() if callable(target) and not isinstance(target, NodeRegistry) else target
    if not isinstance(registry, NodeRegistry):
        raise RegistrySpecError(f"registry {spec!r} is a {type(registry).__name__}, "
                                "not a NodeRegistry")
    registry.freeze()
    writes = getattr(module, "WRITES", {}) or {}
    return Surface(spec, registry, getattr(module, "STATE_SCHEMA", None),
                   {kind: frozenset(fields) for kind, fields in writes.items()},
                   getattr(module, "DEFAULT_POLICY", None), getattr(module, "goal_reached", None),
                   getattr(module, "scripted_planner", None),
                   dict.fromkeys(registry.kinds(), spec))


def registry_from_plugins(extra: Iterable[NodeSpec] = ()) -> NodeRegistry:
    """Every kind installed plugins registered, plus ``extra`` kinds from the caller (unfrozen)."""
    from grapharc.plugins import registry as plugin_registry

    return NodeRegistry([entry.item for entry in plugin_registry("node_kinds").values()] + list(extra))


def _plugins_surface() -> Surface:
    from grapharc.plugins import registry as plugin_registry
    from grapharc.stdlib import DEFAULT_POLICY, StdlibState

    registry = registry_from_plugins().freeze()
    sources = {name: entry.distribution for name, entry in plugin_registry("node_kinds").items()}
    return Surface(PLUGINS, registry, StdlibState,
                   {spec.name: spec.writes for spec in registry}, DEFAULT_POLICY,
                   lambda state: bool(getattr(state, "summary", "")), None, sources)
