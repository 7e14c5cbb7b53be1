"""What the API's routes share: the process's one SessionManager (as ``Sessions``, which the inbox
reads through too), the graphs the operator registered, the durable run store and this process's
worker over it, the assistants created over the API and the cron schedules (both stored beside the
sessions), and this process's cron scheduler once the app starts it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastapi import Request
from langgraph.store.base import BaseStore

from grapharc.assistants.absent import NoAssistants
from grapharc.assistants.contracts import AssistantStore
from grapharc.assistants.errors import AssistantStoreError
from grapharc.crons.contracts import CronStore
from grapharc.crons.manage import open_crons
from grapharc.runs.contracts import RunStore
from grapharc.runs.errors import RunStoreError
from grapharc.runtime.budget import Budget
from grapharc.server.api.budgets import run_budget
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.progress import Progress
from grapharc.server.api.webhooks import Webhooks, open_webhooks
from grapharc.server.api.worker import STATELESS_GRACE_SECONDS, RunWorker
from grapharc.server.auth import AuthConfig, User
from grapharc.server.errors import BearerRefused
from grapharc.server.service.sessions import Sessions
from grapharc.server.webhooks.settings import WebhookSettings
from grapharc.session.lease import Lease
from grapharc.session.manager import DEFAULT_LEASE_SECONDS, SessionManager
from grapharc.session.registries import Registrar, load_registry, register_from
from grapharc.stores import offload
from grapharc.stores.masking import masked
from grapharc.stores.uris import known_schemes, open_store, split_uri, store_uri

if TYPE_CHECKING:
    from grapharc.server.api.cron_scheduler import CronScheduler


@dataclass
class ApiContext:
    """The session manager every route drives (and the inbox reads through, as ``sessions``), the
    durable run store its runs are queued in, this process's worker over that queue, the ceiling
    on every run's budget (``--max-*``), the assistant and cron stores beside the sessions (no cron
    store when their scheme's plugin registers none), the scheduler firing the crons here, and the
    runs' webhooks (``webhook_settings``: the operator's secret, egress rule and delivery bounds)."""

    manager: SessionManager
    runs: RunStore
    ceiling: Budget = field(default_factory=Budget)
    progress: Progress = field(default_factory=Progress)
    stateless_grace: float = STATELESS_GRACE_SECONDS
    webhook_settings: WebhookSettings = field(default_factory=WebhookSettings)
    worker: RunWorker = field(init=False)
    webhooks: Webhooks = field(init=False)
    sessions: Sessions = field(init=False)
    assistants: AssistantStore = field(init=False)
    crons: CronStore | None = field(init=False)
    scheduler: CronScheduler | None = field(init=False, default=None)
    reads_on_loop: bool = field(init=False)
    """Whether a stream reads its run, its trail and their checkpoints on the event loop rather
    than in a trip to the store pool (every store they are read from allows it:
    ``Sessions.read_on_loop_with``)."""

    def __post_init__(self) -> None:
        self.assistants = open_assistants(self.manager.location)
        self.crons = open_crons(self.manager.location) if serves(self.manager.location, "crons") else None
        self.webhooks = open_webhooks(self.manager.location, self.runs, self.webhook_settings,
                                      self.manager.runner, self.manager.clock,
                                      kept=serves(self.manager.location, "webhooks"))
        self.worker = RunWorker(self.manager, self.runs, self.progress, stateless_grace=self.stateless_grace,
                                on_end=self.webhooks.run_ended)
        self.sessions = Sessions(self.manager)
        self.reads_on_loop = self.sessions.read_on_loop_with(self.runs)

    def graph_names(self) -> list[str]:
        """The names of the registered graphs, sorted."""
        return self.manager.graphs.names()

    async def hand_over(self, lease: Lease, graph: str, after_seq: int) -> None:
        """Carry on, through the run worker and under the server's ceiling, a thread a decision
        claimed (its turn begins after the trail entry ``after_seq``)."""
        await self.worker.hand_over(lease, graph, after_seq, run_budget(None, self.ceiling))

    async def aclose(self) -> None:
        """Stop the scheduler, the worker and the webhooks' sender, then close the stores and the
        sessions."""
        if self.scheduler is not None:
            await self.scheduler.stop()
        await self.worker.stop()
        await self.webhooks.aclose()
        await offload.to_thread(self.runs.close)
        await offload.to_thread(self.assistants.close)
        if self.crons is not None:
            await offload.to_thread(self.crons.close)
        await self.sessions.aclose()


def open_context(sessions: str, registries: list[str], ceiling: Budget | None = None,
                 registrars: Sequence[Registrar] = (), *,
                 lease_seconds: float = DEFAULT_LEASE_SECONDS,
                 stateless_grace: float = STATELESS_GRACE_SECONDS,
                 webhooks: WebhookSettings | None = None,
                 long_term_store: BaseStore | None = None) -> ApiContext:
    """Open the sessions and the run store at ``sessions`` and register every graph the
    ``registries`` (by name) and the ``registrars`` (already loaded, e.g. the governed assistant)
    register; every run is held to ``ceiling``, every thread leased for ``lease_seconds`` (a dead
    worker's runs are taken over once that long has passed), every stateless run's thread deleted
    ``stateless_grace`` seconds after the run ends, every webhook sent as ``webhooks`` says; the
    graphs' nodes reach ``long_term_store`` (the store the server serves at ``/store``) as their
    LangGraph store."""
    loaded = [(spec, load_registry(spec)) for spec in registries]  # a bad one refused before the store opens
    manager = SessionManager(sessions, lease_seconds=lease_seconds, long_term_store=long_term_store)
    try:
        for spec, register in loaded:
            register_from(spec, register, manager)
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
        return ApiContext(manager, runs, ceiling=ceiling or Budget(), stateless_grace=stateless_grace,
                          webhook_settings=webhooks or WebhookSettings())
    except BaseException:
        runs.close()
        manager.close()
        raise


def open_assistants(sessions: str | os.PathLike[str]) -> AssistantStore:
    """The assistant store of the sessions at ``sessions`` (beside the run store); one that holds
    nothing and refuses creation when their scheme's plugin registers no assistant store."""
    uri = store_uri(sessions, "assistants")
    if not serves(sessions, "assistants"):
        return NoAssistants(split_uri(uri)[0])
    store = open_store(uri, kind="assistants")
    if not isinstance(store, AssistantStore):
        raise AssistantStoreError(f"the assistants store for {masked(str(sessions))} is "
                                  f"{type(store).__name__!r}, not an AssistantStore",
                                  hint="the distribution that registered its scheme must return one "
                                       "(see grapharc.assistants.contracts)")
    return store


def serves(sessions: str | os.PathLike[str], kind: str) -> bool:
    """Whether the scheme of the sessions at ``sessions`` has a store of ``kind`` registered."""
    return kind in known_schemes().get(split_uri(store_uri(sessions, kind))[0], ())


async def caller(request: Request) -> User | None:
    """Who calls (``who_calls``), kept on the request for ``caller_of``: the router-level dependency of
    every API route. Async, as it never blocks: FastAPI runs a sync dependency in a worker thread, a
    trip per request."""
    request.state.caller = user = who_calls(request)
    return user


def who_calls(request: Request) -> User | None:
    """With an auth file, the user of the request's bearer token (401 saying what is wrong with it,
    without one); without (a loopback server), nobody in particular."""
    auth: AuthConfig | None = getattr(request.app.state, "auth", None)
    return None if auth is None else bearer_user(auth, request.headers.get("authorization"))


def caller_of(request: Request) -> User | None:
    """Who calls, as the router-level ``caller`` found (or found now, where it did not run), for the
    routes every run calls: FastAPI solves each dependency a route names anew, some 50 thousand
    instructions, even when the request's cache holds its value."""
    if hasattr(request.state, "caller"):
        known: User | None = request.state.caller
        return known
    return who_calls(request)


def context_of(request: Request) -> ApiContext:
    """The app's ApiContext, read from the request as ``api`` reads it, for the same routes."""
    context: ApiContext = request.app.state.api
    return context


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
