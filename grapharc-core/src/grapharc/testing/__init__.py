"""Helpers for testing GraphARC code and GraphARC plugins.

``plugin_host`` registers plugins in-process, without entry points;
``ScriptedChatModel`` is the free, deterministic chat model the ``mock/``
backend builds. Conformance kits let any plugin, ours or a third party's, prove
its contract in its own tests: ``claim_store_kit.ClaimStoreConformance``,
``artifact_store_kit.ArtifactStoreConformance``,
``executor_kit.ExecutorConformance``, ``backend_kit.ModelBackendConformance``,
``session_store_kit.SessionStoreConformance``, ``run_store_kit.RunStoreConformance`` and
``checkpointer_kit.CheckpointerConformance`` (which runs LangGraph's
``langgraph-checkpoint-conformance`` suite); a kit too long for one module includes the
kits of its parts (``claim_search_kit``, ``session_lease_kit``, ``session_approval_kit``),
and the store kits share ``store_kit``'s harness and the claims (``claims``) and session steps
(``sessions``) they test with; the checkpointer kit runs LangGraph's suite through
``langgraph_suite`` (which runs it on any saver, a sync one through worker threads) and tests
fencing with ``fences``' leases. They import pytest, so they are not imported here.
``hostile_kit`` scripts a model that tries every escape against an agent's
tools and executor and counts the governance violations. ``thread_trips`` records a code
path's trips to worker threads (``grapharc.stores.offload.to_thread``), so a test can pin how many it makes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from grapharc._lazy import lazy_exports
from grapharc._version import __version__

if TYPE_CHECKING:  # imported where used: pytest imports this package at every start (pytest_plugin)
    from grapharc.plugins import PluginHost, PluginSource

__all__ = ["ScriptedChatModel", "in_process_source", "plugin_host"]


def in_process_source(plugin: Any, *, name: str, version: str = "0.0.0",
                      core_requires: str | None = f"=={__version__}") -> PluginSource:
    """Describe an object of ``@hookimpl`` functions as if a distribution had installed it.

    ``core_requires`` is the range its ``grapharc-core`` dependency would declare
    (``None``: it declares none, so it is reported incompatible).
    """
    from grapharc.plugins import PluginSource

    return PluginSource(name, version, f"<in-process {name}>", lambda: plugin, core_requires)


@contextmanager
def plugin_host(*plugins: PluginSource, installed: bool = True, strict: bool = False,
                allowed: set[str] | None = None) -> Iterator[PluginHost]:
    """Make a host with ``plugins`` (plus installed ones unless ``installed=False``) current.

    The previous host is restored on exit, so one test's plugins never leak into another.
    """
    from grapharc.plugins import PluginHost, set_host
    from grapharc.plugins.host import discover_sources

    sources = list(discover_sources()) if installed else [discover_sources()[0]]
    host = PluginHost([*sources, *plugins], strict=strict, allowed=allowed)
    previous = set_host(host)
    try:
        yield host
    finally:
        set_host(previous)


# ScriptedChatModel needs langchain-core, so it is imported on first use
__getattr__, __dir__ = lazy_exports(__name__, {"ScriptedChatModel": "grapharc.models.scripted"})
