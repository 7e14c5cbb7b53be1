"""What the API's routes share: the process's one SessionManager (as ``Sessions``, which the inbox
reads through too), the graphs the operator registered, the durable run store and this process's
worker over it, and the assistants created over the API (stored beside the sessions)."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request
from langgraph.store.base import BaseStore

from grapharc.assistants.absent import NoAssistants
from grapharc.assistants.contracts import AssistantStore
from grapharc.assistants.errors import AssistantStoreError
from grapharc.errors import GraphARCError
from grapharc.plugins.foreign import FOREIGN_FAILURES, described
from grapharc.runs.contracts import RunStore
from grapharc.runs.errors import RunStoreError
from grapharc.runtime.budget import Budget
from grapharc.server.api.budgets import run_budget
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.progress import Progress
from grapharc.server.api.worker import STATELESS_GRACE_SECONDS, RunWorker
from grapharc.server.auth import AuthConfig, User
from grapharc.server.errors import BearerRefused
from grapharc.server.service.sessions import Sessions
from grapharc.session.lease import Lease
from grapharc.session.manager import DEFAULT_LEASE_SECONDS, SessionManager
from grapharc.stores import offload
from grapharc.stores.masking import masked
from grapharc.stores.uris import known_schemes, open_store, split_uri, store_uri


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
    except FOREIGN_FAILURES as exc:  # its module's own code failed (or called sys.exit) on import
        raise RegistryError(f"registry {spec!r} cannot be loaded: importing it raised {described(exc)}",
                            hint=f"python -c 'import {module_name}' shows the traceback") from exc
    if not callable(found):
        raise RegistryError(f"registry {spec!r} is not callable",
                            hint="it must be a function taking the SessionManager and registering graphs")
    return found  # type: ignore[no-any-return]


def _register(spec: str, register: Registrar, manager: SessionManager) -> None:
    """Call the operator's registry ``spec`` on ``manager``; an error of its own code is the
    registry's to fix, so it is named as such rather than as a GraphARC bug."""
    try:
        register(manager)
    except GraphARCError:
        raise  # GraphARC refused what it registered, and says why
    except FOREIGN_FAILURES as exc:  # SystemExit too: it would end the server with no word
        raise RegistryError(f"registry {spec!r} failed: {described(exc)}",
                            hint="it is called with the SessionManager and registers graphs on it; "
                                 "run it in Python to see the traceback") from exc


@dataclass
class ApiContext:
    """The session manager every route drives (and the inbox reads through, as ``sessions``), the
    durable run store its runs are queued in, this process's worker over that queue, the ceiling
    on every run's budget (``--max-*``), and the assistant store beside the sessions."""

    manager: SessionManager
    runs: RunStore
    ceiling: Budget = field(default_factory=Budget)
    progress: Progress = field(default_factory=Progress)
    stateless_grace: float = STATELESS_GRACE_SECONDS
    worker: RunWorker = field(init=False)
    sessions: Sessions = field(init=False)
    assistants: AssistantStore = field(init=False)

    def __post_init__(self) -> None:
        self.assistants = open_assistants(self.manager.location)
        self.worker = RunWorker(self.manager, self.runs, self.progress, stateless_grace=self.stateless_grace)
        self.sessions = Sessions(self.manager)

    def graph_names(self) -> list[str]:
        """The names of the registered graphs, sorted."""
        return self.manager.graphs.names()

    async def hand_over(self, lease: Lease, graph: str, after_seq: int) -> None:
        """Carry on, through the run worker and under the server's ceiling, a thread a decision
        claimed (its turn begins after the trail entry ``after_seq``)."""
        await self.worker.hand_over(lease, graph, after_seq, run_budget(None, self.ceiling))

    async def aclose(self) -> None:
        """Stop the worker, then close the run and assistant stores and the sessions."""
        await self.worker.stop()
        await offload.to_thread(self.runs.close)
        await offload.to_thread(self.assistants.close)
        await self.sessions.aclose()


def open_context(sessions: str, registries: list[str], ceiling: Budget | None = None,
                 registrars: Sequence[Registrar] = (), *,
                 lease_seconds: float = DEFAULT_LEASE_SECONDS,
                 stateless_grace: float = STATELESS_GRACE_SECONDS,
                 long_term_store: BaseStore | None = None) -> ApiContext:
    """Open the sessions and the run store at ``sessions`` and register every graph the
    ``registries`` (by name) and the ``registrars`` (already loaded, e.g. the governed assistant)
    register; every run is held to ``ceiling``, every thread leased for ``lease_seconds`` (a dead
    worker's runs are taken over once that long has passed), every stateless run's thread deleted
    ``stateless_grace`` seconds after the run ends; the graphs' nodes reach ``long_term_store``
    (the store the server serves at ``/store``) as their LangGraph store."""
    manager = SessionManager(sessions, lease_seconds=lease_seconds, long_term_store=long_term_store)
    try:
        for spec in registries:
            _register(spec, load_registry(spec), manager)
        for register in registrars:
            register(manager)
        runs = open_store(store_uri(sessions, "runs"), kind="runs")
        if not isinstance(runs, RunStore):
            raise RunStoreError(f"the runs store for {masked(sessions)} is {type(runs).__name__!r}, "
                                "not a RunStore",
                                hint="the distribution that registered its scheme must return one "
                                     "(see grapharc.runs.contracts)")
    except BaseException:
        manager.close()
        raise
    try:
        return ApiContext(manager, runs, ceiling=ceiling or Budget(), stateless_grace=stateless_grace)
    except BaseException:
        runs.close()
        manager.close()
        raise


def open_assistants(sessions: str | os.PathLike[str]) -> AssistantStore:
    """The assistant store of the sessions at ``sessions`` (beside the run store); one that holds
    nothing and refuses creation when their scheme's plugin registers no assistant store."""
    uri = store_uri(sessions, "assistants")
    scheme = split_uri(uri)[0]
    if "assistants" not in known_schemes().get(scheme, ()):
        return NoAssistants(scheme)
    store = open_store(uri, kind="assistants")
    if not isinstance(store, AssistantStore):
        raise AssistantStoreError(f"the assistants store for {masked(str(sessions))} is "
                                  f"{type(store).__name__!r}, not an AssistantStore",
                                  hint="the distribution that registered its scheme must return one "
                                       "(see grapharc.assistants.contracts)")
    return store


async def caller(request: Request) -> User | None:
    """Who calls: with an auth file, the user of the request's bearer token (401 saying what is wrong
    with it, without one); without (a loopback server), nobody in particular. Async, as it never
    blocks: FastAPI runs a sync dependency in a worker thread, a trip per request."""
    auth: AuthConfig | None = getattr(request.app.state, "auth", None)
    if auth is None:
        return None
    return bearer_user(auth, request.headers.get("authorization"))


def bearer_user(auth: AuthConfig, authorization: str | None) -> User:
    """The user ``authorization`` (a request's header) names, or a 401 problem saying why none."""
    try:
        return auth.bearer(authorization)
    except BearerRefused as exc:
        raise ApiProblem(401, str(exc), hint="send Authorization: Bearer <token>, with an API token of the "
                                             "auth file or a JWT of its [jwt] issuer",
                         headers={"WWW-Authenticate": "Bearer"}) from None


async def api(request: Request) -> ApiContext:
    """The route dependency: the app's ApiContext (async like ``caller``)."""
    context: Any = request.app.state.api
    return context  # type: ignore[no-any-return]
