"""The graphs ``grapharc mcp serve`` offers: the operator's ``--registry`` functions, each called
with one SessionManager over the ``--sessions`` store, as ``grapharc serve`` calls them.

``grapharc serve`` loads its registries the same way (``grapharc.server.api.context``); plugins
never import each other, so the few lines are repeated here until core holds a loader both call.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence

from grapharc.errors import GraphARCError
from grapharc.plugins.foreign import FOREIGN_FAILURES, described
from grapharc.session.manager import SessionManager

Registrar = Callable[[SessionManager], None]
"""A function that registers graphs on a SessionManager."""


class RegistryError(GraphARCError):
    """A ``--registry`` cannot be loaded or called, or registered nothing to serve."""


def load_registry(spec: str) -> Registrar:
    """``module:attr`` as the callable it names (``RegistryError`` naming what is wrong)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise RegistryError(f"registry {spec!r} is not module:attr",
                            hint="e.g. --registry grapharc.examples.approval:register_credit_graph")
    try:
        found = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise RegistryError(f"registry {spec!r} cannot be loaded: {exc}",
                            hint="name a module on this interpreter's path and a function in it") from None
    except FOREIGN_FAILURES as exc:  # its module's own code failed (or called sys.exit) on import
        raise RegistryError(f"registry {spec!r} cannot be loaded: importing it raised {described(exc)}",
                            hint=f"python -c 'import {module_name}' shows the traceback") from exc
    if not callable(found):
        raise RegistryError(f"registry {spec!r} is not callable",
                            hint="it must be a function taking the SessionManager and registering graphs")
    return found  # type: ignore[no-any-return]


def open_graphs(sessions: str, registries: Sequence[str], *, lease_seconds: float) -> SessionManager:
    """A SessionManager over ``sessions`` with every graph the ``registries`` register; refused
    (``RegistryError``) when they register none, as there would be nothing to serve."""
    if not registries:
        raise RegistryError("no graph to serve: --registry names none",
                            hint="pass --registry module:attr, a function that registers graphs "
                                 "(e.g. grapharc.examples.approval:register_credit_graph)")
    manager = SessionManager(sessions, lease_seconds=lease_seconds)
    try:
        for spec in registries:
            register = load_registry(spec)
            try:
                register(manager)
            except GraphARCError:
                raise  # GraphARC refused what it registered, and says why
            except FOREIGN_FAILURES as exc:
                raise RegistryError(f"registry {spec!r} failed: {described(exc)}",
                                    hint="it is called with the SessionManager and registers graphs on "
                                         "it; run it in Python to see the traceback") from exc
        if not manager.graphs.names():
            raise RegistryError(f"the registries {', '.join(registries)} registered no graph",
                                hint="a registry calls manager.register(graph) for each graph it offers")
    except BaseException:
        manager.close()
        raise
    return manager
