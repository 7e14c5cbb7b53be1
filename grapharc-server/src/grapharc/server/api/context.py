"""What the API's routes share: the one SessionManager, the graphs the operator registered, the runs."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request

from grapharc.errors import GraphARCError
from grapharc.runtime.budget import Budget
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.runbook import RunBook
from grapharc.server.auth import AuthConfig, User
from grapharc.session.manager import SessionManager


class RegistryError(GraphARCError):
    """The --registry the operator named cannot be loaded or called."""


Registrar = Callable[[SessionManager], None]
"""A function that registers graphs on a SessionManager."""


def load_registry(spec: str) -> Registrar:
    """``module:attr`` as a callable that registers graphs on a SessionManager."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise RegistryError(f"registry {spec!r} is not module:attr",
                            hint="e.g. --registry grapharc.examples.approval:register_credit_graph")
    try:
        found = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise RegistryError(f"registry {spec!r} cannot be loaded: {exc}",
                            hint="name a module on this interpreter's path and a function in it") from None
    if not callable(found):
        raise RegistryError(f"registry {spec!r} is not callable",
                            hint="it must be a function taking the SessionManager and registering graphs")
    return found  # type: ignore[no-any-return]


@dataclass
class ApiContext:
    """The session manager every route drives, the runs this process started, and the ceiling
    on every run's budget (the operator's ``--max-*`` options)."""

    manager: SessionManager
    runs: RunBook = field(default_factory=RunBook)
    ceiling: Budget = field(default_factory=Budget)

    def graph_names(self) -> list[str]:
        """The names of the registered graphs, sorted."""
        return self.manager.graphs.names()


def open_context(sessions: str, registries: list[str], ceiling: Budget | None = None,
                 registrars: Sequence[Registrar] = ()) -> ApiContext:
    """Open the sessions at ``sessions`` and register every graph the ``registries`` (by name) and
    the ``registrars`` (already loaded, e.g. the governed assistant) register; every run is held
    to ``ceiling``."""
    manager = SessionManager(sessions)
    for register in [*map(load_registry, registries), *registrars]:
        register(manager)
    return ApiContext(manager, ceiling=ceiling or Budget())


def caller(request: Request) -> User | None:
    """Who calls: with an auth file, the user of the request's bearer token (401 without one);
    without (a loopback server), nobody in particular."""
    auth: AuthConfig | None = getattr(request.app.state, "auth", None)
    if auth is None:
        return None
    user = auth.bearer(request.headers.get("authorization"))
    if user is None:
        raise ApiProblem(401, "this API needs a bearer token from the server's auth file",
                         hint="send Authorization: Bearer <token>", headers={"WWW-Authenticate": "Bearer"})
    return user


def api(request: Request) -> ApiContext:
    """The route dependency: the app's ApiContext."""
    context: Any = request.app.state.api
    return context  # type: ignore[no-any-return]
