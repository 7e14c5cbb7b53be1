"""GraphARC's plugin system: hook specs, discovery and the registries plugins fill.

A plugin is a distribution with an entry point in group ``grapharc`` naming a
light module of ``@hookimpl`` functions; see :mod:`grapharc.plugins.hookspecs`
for the contract of each hook. This package is the bottom layer: it imports nothing of
the planner, policy or CLI. Core's own built-ins register through the same hooks from
one layer up (:mod:`grapharc.core_plugin`).
"""

from __future__ import annotations

import sys

from grapharc.plugins.errors import (
    DuplicateRegistrationError,
    IncompatiblePluginError,
    PluginError,
    PluginFactoryError,
    PluginFailedError,
    UnknownNameError,
    UnknownPluginError,
)
from grapharc.plugins.hookspecs import (
    RegisterBackend,
    RegisterEmbedder,
    RegisterExecutor,
    RegisterNodeKind,
    RegisterPolicySource,
    RegisterStore,
    RegisterTool,
    RegisterToolSource,
    hookimpl,
    hookspec,
)
from grapharc.plugins.host import (
    CORE_DISTRIBUTION,
    DistributionRecord,
    PluginHost,
    PluginSource,
    discover_sources,
    load_filter,
    strict_mode,
)
from grapharc.plugins.types import (
    BackendInfo,
    EmbedderInfo,
    ExecutorInfo,
    NodeKind,
    PolicySourceInfo,
    Registered,
    StoreInfo,
    ToolInfo,
    ToolSourceInfo,
    ToolSourceLayer,
    resolve_factory,
)

__all__ = [
    "CORE_DISTRIBUTION",
    "BackendInfo",
    "DistributionRecord",
    "DuplicateRegistrationError",
    "EmbedderInfo",
    "ExecutorInfo",
    "IncompatiblePluginError",
    "NodeKind",
    "PluginError",
    "PluginFactoryError",
    "PluginFailedError",
    "PluginHost",
    "PluginSource",
    "PolicySourceInfo",
    "RegisterBackend",
    "RegisterEmbedder",
    "RegisterExecutor",
    "RegisterNodeKind",
    "RegisterPolicySource",
    "RegisterStore",
    "RegisterTool",
    "RegisterToolSource",
    "Registered",
    "StoreInfo",
    "ToolInfo",
    "ToolSourceInfo",
    "ToolSourceLayer",
    "UnknownNameError",
    "UnknownPluginError",
    "discover_sources",
    "get_host",
    "hookimpl",
    "hookspec",
    "registry",
    "resolve_factory",
    "set_host",
]

_host: PluginHost | None = None


def get_host() -> PluginHost:
    """The process's plugin host, discovering installed plugins on first use (from the discovery
    cache when no distribution changed since it was saved).

    A name in ``GRAPHARC_LOAD_PLUGINS`` that is not installed is named on stderr (an
    error in strict mode), so a typo does not silently load nothing.
    """
    global _host
    if _host is None:
        from grapharc.plugins.discovery_cache import cached_sources

        _host = PluginHost(cached_sources(), strict=strict_mode(), allowed=load_filter())
        for unknown in _host.not_installed:
            sys.stderr.write(f"warning: {unknown}\n")
    return _host


def set_host(host: PluginHost | None) -> PluginHost | None:
    """Replace the process's host (``None`` rediscovers on next use); return the old one."""
    global _host
    previous, _host = _host, host
    return previous


def registry(facet: str) -> dict[str, Registered]:
    """One filled registry of the process's host: ``node_kinds``, ``stores``, ..."""
    return get_host().registry(facet)
