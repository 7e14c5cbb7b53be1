"""A planning surface: the registry named by ``--registry`` and what its module declares beside it.

``module:attr`` names a ``NodeRegistry``, or a function that declares it returns
one (``def build_registry() -> NodeRegistry``); anything else is refused without
being called, so a reference can never run ``sys:exit`` or ``builtins:input``; a module or
function that raises, ``SystemExit`` included, is a ``RegistrySpecError`` naming it. The
module may declare ``STATE_SCHEMA``, ``WRITES``, ``DEFAULT_POLICY``,
``goal_reached`` and ``scripted_planner``. The name ``plugins`` is every kind
installed plugins registered (the stdlib's among them), with the stdlib's
writes and default policy, and the stdlib's state plus every field a kind
declares with a type: the zero-configuration surface.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, get_type_hints

from pydantic import BaseModel

from grapharc.errors import GraphARCError
from grapharc.planner.registry import NodeRegistry, NodeSpec
from grapharc.plugins.foreign import FOREIGN_FAILURES, described

PLUGINS = "plugins"
DEMO = "grapharc.examples.plan_incident:build_registry"
PLUGINS_SURFACE = "grapharc.stdlib.surface:plugins_surface"
"""What ``plugins`` names: built over the stdlib's state, writes and policy, so it lives with the
stdlib (which builds on the planner) and is found by this reference, as a registry spec is."""


class RegistrySpecError(GraphARCError):
    """A ``--registry`` value that does not name a usable registry."""

    hint = ("use module:attr naming a NodeRegistry or a function declared '-> NodeRegistry', "
            "or 'plugins'")


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
        module_name, _, attr = PLUGINS_SURFACE.partition(":")
        built: Surface = getattr(importlib.import_module(module_name), attr)()
        return built
    module_name, colon, attr = spec.partition(":")
    if not colon or not module_name or not attr:
        raise RegistrySpecError(f"registry {spec!r} is not of the form module:attr")
    try:
        module = importlib.import_module(module_name)
    except (ImportError, TypeError, ValueError) as exc:  # e.g. a relative or NUL-bearing name
        raise RegistrySpecError(f"registry {spec!r}: cannot import {module_name!r}: {exc}") from None
    except FOREIGN_FAILURES as exc:  # the module's own code failed (or called sys.exit) on import
        raise RegistrySpecError(f"registry {spec!r}: importing {module_name!r} raised {described(exc)}",
                                hint=f"python -c 'import {module_name}' shows the traceback") from exc
    target = getattr(module, attr, None)
    if target is None:
        raise RegistrySpecError(f"registry {spec!r}: module {module_name!r} has no {attr!r}")
    registry = target if isinstance(target, NodeRegistry) else _built(spec, attr, target)
    registry.freeze()
    return Surface(spec, registry, _state_schema(spec, module), _writes(spec, module),
                   getattr(module, "DEFAULT_POLICY", None), getattr(module, "goal_reached", None),
                   getattr(module, "scripted_planner", None),
                   dict.fromkeys(registry.kinds(), spec))


def _state_schema(spec: str, module: Any) -> type[BaseModel] | None:
    """The module's ``STATE_SCHEMA``: a Pydantic model class, or None when it declares none."""
    schema = getattr(module, "STATE_SCHEMA", None)
    if schema is not None and not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        raise RegistrySpecError(f"registry {spec!r}: STATE_SCHEMA is a {type(schema).__name__}, "
                                "not a Pydantic model class")
    return schema


def _writes(spec: str, module: Any) -> dict[str, frozenset[str]]:
    """The module's ``WRITES``: each kind's field names (empty when it declares none)."""
    declared = getattr(module, "WRITES", None) or {}
    named = {kind: _names(fields) for kind, fields in declared.items()} \
        if isinstance(declared, Mapping) else {}
    writes = {kind: names for kind, names in named.items() if names is not None}
    if not isinstance(declared, Mapping) or len(writes) < len(declared):
        raise RegistrySpecError(f"registry {spec!r}: WRITES must map each kind to a set of field "
                                f"names, got a {type(declared).__name__} that does not")
    return writes


def _names(fields: Any) -> frozenset[str] | None:
    """``fields`` as a set of field names, or None when it is not one."""
    if isinstance(fields, str | bytes) or not isinstance(fields, Iterable):
        return None
    try:
        names = frozenset(fields)
    except TypeError:  # an unhashable member
        return None
    return names if all(isinstance(name, str) for name in names) else None


def _built(spec: str, attr: str, factory: Any) -> NodeRegistry:
    """The registry ``factory`` builds, called only if it declares it returns a NodeRegistry."""
    what = f"registry {spec!r} names {attr!r} ({type(factory).__name__})"
    if not callable(factory):
        raise RegistrySpecError(f"{what}, not a NodeRegistry or a function returning one")
    try:
        returns = get_type_hints(factory).get("return")
    except FOREIGN_FAILURES as exc:  # an annotation naming what its module cannot import, or not Python
        raise RegistrySpecError(f"{what}, whose annotations cannot be resolved "
                                f"({described(exc)}); it was not called") from None
    if not (isinstance(returns, type) and issubclass(returns, NodeRegistry)):
        raise RegistrySpecError(f"{what}, which does not declare that it returns a NodeRegistry; "
                                "it was not called",
                                hint="annotate the factory: def build_registry() -> NodeRegistry")
    try:
        inspect.signature(factory).bind()
    except (TypeError, ValueError) as exc:
        raise RegistrySpecError(f"{what}, which cannot be called without arguments ({exc}); "
                                "it was not called") from None
    try:
        registry = factory()
    except GraphARCError:
        raise
    except FOREIGN_FAILURES as exc:  # SystemExit too: it would end the command with no word
        raise RegistrySpecError(f"{what}, which raised {described(exc)}") from exc
    if not isinstance(registry, NodeRegistry):
        raise RegistrySpecError(f"{what}, which returned a {type(registry).__name__}, "
                                "not the NodeRegistry it declares")
    return registry


def registry_from_plugins(extra: Iterable[NodeSpec] = ()) -> NodeRegistry:
    """Every kind installed plugins registered, plus ``extra`` kinds from the caller (unfrozen)."""
    from grapharc.plugins import registry as plugin_registry

    return NodeRegistry([entry.item for entry in plugin_registry("node_kinds").values()] + list(extra))
