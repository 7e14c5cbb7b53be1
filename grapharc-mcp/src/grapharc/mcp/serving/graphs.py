"""The graphs ``grapharc mcp serve`` offers: the operator's ``--registry`` functions, each called
with one SessionManager over the ``--sessions`` store, through core's loader as ``grapharc serve``
calls them. Every registry is loaded before the store is opened, so a bad one leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Sequence

from grapharc.session.manager import SessionManager
from grapharc.session.registries import RegistryError, load_registry, register_from


def open_graphs(sessions: str, registries: Sequence[str], *, lease_seconds: float) -> SessionManager:
    """A SessionManager over ``sessions`` with every graph the ``registries`` register; refused
    (``RegistryError``) when they register none, as there would be nothing to serve."""
    if not registries:
        raise RegistryError("no graph to serve: --registry names none",
                            hint="pass --registry module:attr, a function that registers graphs "
                                 "(e.g. grapharc.examples.approval:register_credit_graph)")
    registrars = [(spec, load_registry(spec)) for spec in registries]
    manager = SessionManager(sessions, lease_seconds=lease_seconds)
    try:
        for spec, register in registrars:
            register_from(spec, register, manager)
        if not manager.graphs.names():
            raise RegistryError(f"the registries {', '.join(registries)} registered no graph",
                                hint="a registry calls manager.register(graph) for each graph it offers")
    except BaseException:
        manager.close()
        raise
    return manager
