"""``grapharc serve``: bind the address, then run the HTTP API on it until a signal stops it.

The address is announced only once the server accepts requests: ``serving on URL`` on stderr,
or with ``--json`` one document on stdout whose ``port`` is the port actually bound.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack, closing, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from grapharc.cli.options import (
    ConfigFile,
    LeaseSeconds,
    Port,
    Ranged,
    ReadableFile,
    Sessions,
    TenantOption,
    option,
    setting,
)
from grapharc.cli.output import JSON_OPTION_HELP, write_json
from grapharc.config.values import Count, Number
from grapharc.server.errors import AuthRequiredError, WorkersNeedForkError
from grapharc.server.listener import Engine, ListeningAddress, listen
from grapharc.server.long_term import IN_PROCESS, default_store_uri, kept_in_process
from grapharc.server.starting import answering_while_starting
from grapharc.server.thread_pool import DEFAULT_THREADS, THREADS

if TYPE_CHECKING:
    from fastapi import FastAPI

    from grapharc.config.settings import Config
    from grapharc.governed.run import GovernedRun
    from grapharc.memory.longterm import GraphARCStore
    from grapharc.runtime.budget import Budget
    from grapharc.server.api.context import ApiContext
    from grapharc.server.auth import AuthConfig
    from grapharc.server.processes import WorkerSlot
    from grapharc.server.webhooks.settings import WebhookSettings
    from grapharc.trace.writer import TraceWriter

DEFAULT_DRAIN_TIMEOUT = 10.0
DEFAULT_LEASE_SECONDS = 30.0  # grapharc.session.manager's, without importing it before it is needed
DRAIN_TIMEOUT = Ranged(Number(0, 3600, "seconds", above=False), "SECONDS")
DEFAULT_STATELESS_GRACE = 30.0  # grapharc.server.api.worker's, without importing it before it is needed
STATELESS_GRACE = Ranged(Number(0, 86400, "seconds", above=False), "SECONDS")
WORKERS = Ranged(Count(1, 256), "N")
DEFAULT_WEBHOOK_TIMEOUT = 10.0  # grapharc.server.webhooks.settings's, not imported before it is needed
WEBHOOK_TIMEOUT = Ranged(Number(0, 600, "seconds"), "SECONDS")
DEFAULT_WEBHOOK_ATTEMPTS = 5
WEBHOOK_ATTEMPTS = Ranged(Count(1, 100), "N")

AUTH_FILE_HELP = ("TOML file of users (argon2 password hashes), API tokens (SHA-256) and who may decide "
                  "which approvals; serves the approval inbox at /inbox. Required off loopback.")
ALLOWED_HOST_HELP = ("A host name (or address) this server answers to besides localhost, 127.0.0.1 and "
                     "[::1], and whose pages may post to it (repeatable). Without --auth-file a request "
                     "sent to any other name is refused (421), against DNS rebinding.")
DRAIN_TIMEOUT_HELP = ("Seconds to let in-flight requests finish after SIGTERM or Ctrl+C before stopping "
                      "without them (exit 1).")

REGISTRY_HELP = ("module:attr of a function that registers graphs on the SessionManager "
                 "(repeatable); with it the server offers assistants (those graphs), threads and runs.")
POLICY_HELP = ("Policy TOML document; with it (or policy set by $GRAPHARC_POLICY or grapharc.toml) the "
               "server offers the 'governed' assistant: the governed loop of 'grapharc plan'.")
KINDS_HELP = ("module:attr of the node-kind registry the governed assistant's planner proposes from, "
              "or 'plugins' (default: the registry setting, else the incident demo). Not --registry, "
              "which registers graphs.")
MODEL_HELP = "Planner model spec backend/model of the governed assistant (default: the kinds' scripted one)."
WORKERS_HELP = ("Server processes sharing the port, each with its own --threads pool and run worker, so "
                "the API uses more than one core; 1 serves in this process.")
THREADS_HELP = ("Threads for sync graph nodes: each holds one while it runs, so this bounds how many "
                "runs make progress at once (store calls have a pool of their own).")
STATELESS_GRACE_HELP = ("Seconds a stateless run's thread (POST /runs with on_completion 'delete', the "
                        "default) outlives the run before it is deleted, so its clients read the end first.")
WEBHOOK_ALLOW_HELP = ("An address, CIDR network or host name run webhooks may be posted to (repeatable); "
                      "without it, loopback addresses only. A run whose webhook resolves elsewhere is "
                      "refused (422).")
WEBHOOK_SECRET_ENV_HELP = ("Name of the environment variable whose value signs every run webhook "  # noqa: S105 -- a help text, not a secret
                           "(X-GraphARC-Signature: sha256=HMAC of timestamp.body); without it hooks go "
                           "unsigned.")
WEBHOOK_TIMEOUT_HELP = "Seconds one webhook attempt may take; a timeout is retried."
WEBHOOK_ATTEMPTS_HELP = ("Attempts at each webhook before it is given up (5xx answers, timeouts and "
                         "connection errors are retried with a doubling backoff from 1 s; a 4xx is not).")
STORE_HELP = ("Long-term store served at /store: a store URI keeping items (memory:, sqlite:PATH, "
              "postgresql://...). Default: beside the sessions (their database for postgresql://, else "
              "sqlite:SESSIONS/store.db; memory: where no SQLite item store is installed).")
STORE_EMBEDDER_HELP = ("Embedder for the long-term store's vector channel, as a spec: hashing:N (local, "
                       "deterministic), openai:MODEL?base_url=URL&key_env=NAME (an OpenAI-compatible "
                       "/v1/embeddings endpoint; grapharc-gateway), or a plugin's. Each item put and each "
                       "query searched is embedded by it. Default: none, /store search ranks by words only.")
CEILING_HELP = ("Ceiling on the {} any one run of the threads API may spend: a run's budget above it "
                "is refused (422), and a run that asks for none runs under it.")


def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Port = 8000,
    drain_timeout: Annotated[float, option("--drain-timeout", kind=DRAIN_TIMEOUT,
                                           help=DRAIN_TIMEOUT_HELP)] = DEFAULT_DRAIN_TIMEOUT,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
    auth_file: Annotated[Path | None, option("--auth-file", kind=ReadableFile("auth file"),
                                             help=AUTH_FILE_HELP)] = None,
    sessions: Sessions = None,
    allowed_host: Annotated[list[str] | None, typer.Option("--allowed-host", metavar="NAME",
                                                           help=ALLOWED_HOST_HELP)] = None,
    registry: Annotated[list[str] | None, typer.Option(help=REGISTRY_HELP)] = None,
    lease: LeaseSeconds = DEFAULT_LEASE_SECONDS,
    threads: Annotated[int, option("--threads", kind=Ranged(THREADS, "N"),
                                   help=THREADS_HELP)] = DEFAULT_THREADS,
    workers: Annotated[int, option("--workers", kind=WORKERS, help=WORKERS_HELP)] = 1,
    stateless_grace: Annotated[float, option("--stateless-grace", kind=STATELESS_GRACE,
                                             help=STATELESS_GRACE_HELP)] = DEFAULT_STATELESS_GRACE,
    max_tokens: Annotated[int | None, option(
        "--max-tokens", kind=setting("max_tokens", "N"), help=CEILING_HELP.format("tokens"))] = None,
    max_iterations: Annotated[int | None, option(
        "--max-iterations", kind=setting("max_iterations", "N"),
        help=CEILING_HELP.format("node runs"))] = None,
    max_seconds: Annotated[float | None, option(
        "--max-seconds", kind=setting("max_seconds", "SECONDS"), help=CEILING_HELP.format("seconds"))] = None,
    max_cost_usd: Annotated[float | None, option(
        "--max-cost-usd", kind=setting("max_cost_usd", "USD"),
        help=CEILING_HELP.format("US dollars"))] = None,
    policy: Annotated[Path | None, option("--policy", kind=ReadableFile("policy file"),
                                          help=POLICY_HELP)] = None,
    kinds: Annotated[str | None, typer.Option("--kinds", help=KINDS_HELP)] = None,
    model: Annotated[str | None, typer.Option("--model", help=MODEL_HELP)] = None,
    tenant: TenantOption = None,
    webhook_allow: Annotated[list[str] | None, typer.Option("--webhook-allow", metavar="HOST_OR_CIDR",
                                                            help=WEBHOOK_ALLOW_HELP)] = None,
    webhook_secret_env: Annotated[str | None, typer.Option("--webhook-secret-env", metavar="NAME",
                                                           help=WEBHOOK_SECRET_ENV_HELP)] = None,
    webhook_timeout: Annotated[float, option("--webhook-timeout", kind=WEBHOOK_TIMEOUT,
                                             help=WEBHOOK_TIMEOUT_HELP)] = DEFAULT_WEBHOOK_TIMEOUT,
    webhook_attempts: Annotated[int, option("--webhook-attempts", kind=WEBHOOK_ATTEMPTS,
                                            help=WEBHOOK_ATTEMPTS_HELP)] = DEFAULT_WEBHOOK_ATTEMPTS,
    config: ConfigFile = None,
    store: Annotated[str | None, typer.Option("--store", metavar="URI", help=STORE_HELP)] = None,
    store_embedder: Annotated[str | None, typer.Option("--store-embedder", metavar="SPEC",
                                                       help=STORE_EMBEDDER_HELP)] = None,
) -> None:
    """Serve the GraphARC HTTP API until SIGTERM or Ctrl+C, then finish in-flight requests and exit 0.
    The settings (and the governed assistant's policy) are checked, then the address bound; until
    the graphs, stores and app are loaded (most of the start-up) it answers ``/healthz`` not ready
    and everything else 503 (``grapharc.server.starting``)."""
    from grapharc.governed.settings import resolve_config
    from grapharc.server.governed import resolve_governed

    auth = None
    if auth_file is not None:
        from grapharc.server.auth import load_auth

        auth = load_auth(auth_file)
    ceilings = {"max_tokens": max_tokens, "max_iterations": max_iterations, "max_seconds": max_seconds,
                "max_cost_usd": max_cost_usd}
    settings = resolve_config("serve", {"sessions": sessions, "allowed_hosts": allowed_host,
                                        "webhook_allow": webhook_allow,
                                        "webhook_secret_env": webhook_secret_env, **ceilings},
                              config_path=config)
    governed = resolve_governed({"policy": policy, "registry": kinds, "model": model, "tenant": tenant,
                                 **ceilings}, config)
    if workers > 1 and not hasattr(os, "fork"):
        raise WorkersNeedForkError("--workers above 1 forks its worker processes, which this system cannot",
                                   hint="serve with --workers 1 here, or on Linux or macOS")

    location = str(settings.value("sessions"))
    store_uri = store if store is not None else default_store_uri(location)
    serving = Serving(location, auth, registry or [], governed, ceiling_of(settings),
                      lease=lease, stateless_grace=stateless_grace, threads=threads,
                      drain_timeout=drain_timeout, allowed_hosts=settings.value("allowed_hosts") or (),
                      webhooks=webhook_settings(settings, webhook_timeout, webhook_attempts),
                      store=store_uri, store_embedder=store_embedder)
    listener = bound(host, port, auth)
    with ExitStack() as held:
        with answering_while_starting(listener):  # /healthz answers (not ready) while the rest loads
            if workers > 1:  # a bad registry, store or trace file is refused here, once
                with governed_trace(governed) as trace, closing(serving.opened_store()) as store:
                    close_checked(serving.opened_api(trace, store))
            else:
                app = serving.opened_app(held.enter_context(governed_trace(governed)))
        if workers == 1:
            serving.run(listener, app,
                        lambda address, engine: announce(address, engine, as_json, settings, governed,
                                                         store=store_uri, embedder=store_embedder))
            return
    code = serve_workers(serving, workers, listener,
                         lambda address, engine, pids: announce(address, engine, as_json, settings,
                                                                governed, workers=pids, store=store_uri,
                                                                embedder=store_embedder))
    if code:
        raise typer.Exit(code)


@dataclass(frozen=True)
class Serving:
    """What every process of one ``grapharc serve`` serves: the sessions, sign-in, the graphs the
    threads API offers (registered, and the governed assistant), the limits it serves them under,
    the host names it answers to besides loopback's (``hosts``) and the long-term store's URI."""

    location: str
    auth: AuthConfig | None
    registry: list[str]
    governed: GovernedRun | None
    ceiling: Budget
    lease: float
    stateless_grace: float
    threads: int
    drain_timeout: float
    allowed_hosts: tuple[str, ...] = ()
    webhooks: WebhookSettings | None = None
    store: str = IN_PROCESS
    store_embedder: str | None = None

    def opened_api(self, trace: TraceWriter | None, store: GraphARCStore | None = None) -> ApiContext | None:
        """The threads API's context (None when no graph is offered), its governed assistant
        tracing to ``trace``, its graphs' nodes reaching ``store``."""
        if not self.registry and self.governed is None:
            return None
        from grapharc.server.api.context import open_context
        from grapharc.server.governed import registrar

        return open_context(self.location, self.registry, self.ceiling,
                            [registrar(self.governed, trace)] if self.governed is not None else [],
                            lease_seconds=self.lease, stateless_grace=self.stateless_grace,
                            webhooks=self.webhooks, long_term_store=store)

    def opened_store(self) -> GraphARCStore:
        """The long-term store, opened by this process (each worker opens its own connection)."""
        from grapharc.memory.longterm import open_long_term_store

        return open_long_term_store(self.store, embedder=self.store_embedder)

    def opened_app(self, trace: TraceWriter | None, slot: WorkerSlot | None = None) -> FastAPI:
        """The HTTP app over this process's own long-term store and the threads API whose graphs
        reach it (the app closes both as it stops), for this process alone or for worker ``slot``."""
        store = self.opened_store()
        try:
            return self.app(self.opened_api(trace, store), store, slot)
        except BaseException:
            store.close()
            raise

    def app(self, api: ApiContext | None, store: GraphARCStore, slot: WorkerSlot | None = None) -> FastAPI:
        """The HTTP app over ``api`` and ``store``, for this process alone or for worker ``slot``."""
        from grapharc.server.app import create_app

        siblings = None
        if slot is not None:  # a worker of several: imported only then, as the supervisor's module is
            from grapharc.server.siblings import Siblings

            siblings = Siblings(slot.wake_dir, slot.index, slot.count)
        return create_app(sessions=self.location, auth=self.auth, api=api, threads=self.threads,
                          siblings=siblings, allowed_hosts=self.allowed_hosts, store=store)

    def run(self, listener: socket.socket, app: FastAPI,
            on_listening: Callable[[ListeningAddress, Engine], None], slot: WorkerSlot | None = None) -> None:
        """Serve ``app`` on ``listener`` until stopped, as this process alone or as worker ``slot``."""
        from grapharc.server.lifecycle import serve_until_stopped

        serve_until_stopped(listener, app, drain_timeout=self.drain_timeout, on_listening=on_listening,
                            lifeline=slot.lifeline if slot is not None else None)


def serve_workers(serving: Serving, workers: int, listener: socket.socket,
                  announce_workers: Callable[[ListeningAddress, Engine, list[int]], None]) -> int:
    """Serve on ``listener`` from ``workers`` forked processes until stopped; the exit code."""
    from grapharc.server.processes import Supervisor

    try:
        def serve_worker(ready: Callable[[Engine], None], slot: WorkerSlot) -> None:
            with governed_trace(serving.governed) as trace:  # each worker appends with its own descriptor
                serving.run(listener, serving.opened_app(trace, slot),
                            lambda _address, engine: ready(engine), slot)

        supervisor = Supervisor(workers, serve_worker, serving.drain_timeout)
        engine = supervisor.start()
        announce_workers(ListeningAddress.of(listener), engine, supervisor.pids())
        return supervisor.run()
    finally:
        listener.close()


def bound(host: str, port: int, auth: AuthConfig | None) -> socket.socket:
    """The listening socket, refused off loopback without sign-in (anyone could decide approvals)."""
    listener = listen(host, port)
    if auth is None and not ipaddress.ip_address(ListeningAddress.of(listener).host).is_loopback:
        listener.close()
        raise AuthRequiredError(f"refusing to serve on {host} without sign-in: anyone who reaches it "
                                "could decide approvals",
                                hint="pass --auth-file FILE, or listen on 127.0.0.1")
    return listener


def webhook_settings(settings: Config, timeout: float, attempts: int) -> WebhookSettings:
    """How run webhooks are sent: signed with the secret the ``webhook_secret_env`` variable holds
    (redacted wherever a run writes, as provider keys are; none: unsigned, said by ``announce``), only
    to the ``webhook_allow`` addresses (none: loopback), each attempt within ``timeout`` seconds."""
    from grapharc.redaction import mark_secret_names
    from grapharc.server.webhooks.egress import EgressRule
    from grapharc.server.webhooks.settings import WebhookSettings, secret_from

    variable = settings.value("webhook_secret_env")
    if variable is not None:
        mark_secret_names([variable])
    return WebhookSettings(secret=secret_from(variable),
                           rule=EgressRule.of(settings.value("webhook_allow") or ()),
                           timeout=timeout, attempts=attempts)


def ceiling_of(settings: Config) -> Budget:
    """The most any one run of the threads API may spend: the ceilings the settings' layers name."""
    from grapharc.runtime.budget import Budget

    return Budget(**{name: settings.value(name) for name in ("max_tokens", "max_iterations", "max_seconds",
                                                             "max_cost_usd")})


def close_checked(api: ApiContext | None) -> None:
    """Close what ``open_context`` opened to check it (the supervisor keeps no store open)."""
    if api is not None:
        api.runs.close()
        api.assistants.close()
        if api.crons is not None:
            api.crons.close()
        if api.webhooks.store is not None:
            api.webhooks.store.close()
        api.manager.close()


def governed_trace(governed: GovernedRun | None) -> AbstractContextManager[TraceWriter | None]:
    """The governed assistant's trace writer (the ``trace`` setting), open while the server runs."""
    from grapharc.governed.run import configured_trace

    return configured_trace(governed.config) if governed is not None else nullcontext()


def announce(address: ListeningAddress, engine: Engine, as_json: bool, settings: Config,
             governed: GovernedRun | None = None, workers: list[int] | None = None,
             store: str = IN_PROCESS, embedder: str | None = None) -> None:
    """Say where the server listens and what serves it (and, with ``--workers``, the workers'
    process ids), where its settings, the governed assistant's policy and the long-term ``store``
    (with its ``embedder`` spec) came from: one JSON document on stdout, or lines on stderr (a store
    kept in the process only, and webhooks going unsigned, are noted on stderr either way: once it
    listens, so a server that could not start says only why)."""
    from grapharc.governed.provenance import config_provenance
    from grapharc.server.governed import announcement
    from grapharc.stores.masking import masked

    offered = announcement(governed) if governed is not None else None
    if kept_in_process(store):
        where = "each worker" if workers else "this process"
        sys.stderr.write(f"store: {store} keeps /store items in {where} only, lost when it stops "
                         "(--store sqlite:PATH or postgresql://... keeps them)\n")
    if settings.value("webhook_secret_env") is None:
        sys.stderr.write("webhooks: no signing secret configured (--webhook-secret-env NAME): run webhooks "
                         "are sent unsigned\n")
    if as_json:
        write_json({"ok": True, "url": address.url, "host": address.host, "port": address.port,
                    "pid": os.getpid(), "event_loop": engine.event_loop, "http": engine.http,
                    "sessions": masked(str(settings.value("sessions"))), "store": masked(store),
                    **({"store_embedder": embedder} if embedder is not None else {}),
                    **config_provenance(settings),
                    **({"workers": workers} if workers is not None else {}),
                    **({"governed": offered} if offered is not None else {})})
        return
    if offered is not None:
        sys.stderr.write(f"governed assistant: policy {offered['policy_line']}\n")
    if embedder is not None:
        sys.stderr.write(f"store: /store search adds the vector channel of {embedder}\n")
    who = f"pid {os.getpid()}" if workers is None else \
        f"supervisor pid {os.getpid()}, {len(workers)} workers: pids {', '.join(map(str, workers))}"
    sys.stderr.write(f"serving on {address.url} ({who}, {engine.event_loop} and {engine.http}; "
                     "Ctrl+C or SIGTERM stops)\n")
    sys.stderr.flush()
