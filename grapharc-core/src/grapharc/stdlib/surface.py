"""The ``plugins`` surface: every installed kind, over the stdlib's state, writes and default policy.

``grapharc plan --registry plugins`` (and ``run``'s default) plans over it; the planner finds it by
reference (:data:`grapharc.planner.surface.PLUGINS_SURFACE`), since it is built on the stdlib.
"""

from __future__ import annotations

from grapharc.planner.run_state import state_with_writes
from grapharc.planner.surface import PLUGINS, Surface, registry_from_plugins


def plugins_surface() -> Surface:
    """Every kind installed plugins registered, over the stdlib's state (plus each kind's typed
    fields), with its writes and default policy: the zero-configuration surface ``plugins``."""
    from grapharc.plugins import registry as plugin_registry
    from grapharc.stdlib.kinds import DEFAULT_POLICY, StdlibState

    registry = registry_from_plugins().freeze()
    sources = {name: entry.distribution for name, entry in plugin_registry("node_kinds").items()}
    state = state_with_writes(StdlibState, registry, name="PluginsState", owners=sources)
    return Surface(PLUGINS, registry, state,
                   {spec.name: frozenset(spec.writes) for spec in registry}, DEFAULT_POLICY,
                   lambda state: bool(getattr(state, "summary", "")), None, sources)
