"""The HTTP application: health, the plugin inventory, given sessions the JSON API, given a long-term
store its routes.

Whatever is mounted, an error answers as a problem document, a request is held to the host names
and origins ``hosts`` allows and its body to the size and JSON depth limits before any route reads
it; an API route is found through an index of the routes rather than by trying them in turn."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI

from grapharc._version import __version__
from grapharc.server.api.limits import BodyLimits
from grapharc.server.api.problem_schema import describe_problems
from grapharc.server.api.problems import install_problem_handlers
from grapharc.server.docs_gate import SignedInOnly
from grapharc.server.hosts import HostGuard
from grapharc.server.route_index import index_routes
from grapharc.server.service.sessions import Sessions
from grapharc.server.thread_pool import DEFAULT_THREADS, use_thread_pool
from grapharc.stores import offload

if TYPE_CHECKING:
    from grapharc.memory.longterm import GraphARCStore
    from grapharc.server.api.context import ApiContext
    from grapharc.server.auth import AuthConfig
    from grapharc.server.siblings import Siblings


def create_app(*, sessions: str | None = None, auth: AuthConfig | None = None,
               api: ApiContext | None = None, threads: int = DEFAULT_THREADS,
               siblings: Siblings | None = None, allowed_hosts: Sequence[str] = (),
               store: GraphARCStore | None = None) -> FastAPI:
    """Build the FastAPI app (a fresh one per call, so tests can hold their own); the approval
    inbox is served when both the ``sessions`` location and the ``auth`` file are given, the
    assistants, threads and runs routes when ``api`` (the sessions with registered graphs) is, the
    ``/store`` routes over ``store`` when it is (the app sweeps its expired items while it serves
    and closes it as it stops);
    the api's run worker starts and stops with the app, which runs blocking work (sync nodes,
    store calls) on a pool of ``threads`` threads. Inbox and API read the sessions through one
    SessionManager: the api's, or one the app opens as it starts; the app closes it as it stops. A
    worker of ``serve --workers`` passes its ``siblings`` channel: progress of the runs here wakes
    the siblings' streams, and theirs ours. Without ``auth`` a request must be sent to a loopback
    name or one of ``allowed_hosts``; with or without, a page may change something only from one
    of those hosts (or, with ``auth``, the server's own: ``hosts``)."""

    inbox = sessions is not None and auth is not None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        use_thread_pool(threads)
        loop = asyncio.get_running_loop()
        if api is not None:
            if siblings is not None:
                api.progress.relay = siblings.tell
                siblings.listen(loop, api.progress.wake)
            api.worker.start()
            api.webhooks.start()
            from grapharc.server.api.cron_runs import start_schedules

            start_schedules(api, auth)
        elif inbox:
            app.state.sessions = await offload.to_thread(Sessions.open, str(sessions))
        if store is not None:
            store.start_ttl_sweeper()
        yield
        if store is not None:
            await offload.to_thread(store.close)  # its sweeper stops first
        if api is not None:
            await api.aclose()
        elif inbox:
            await app.state.sessions.aclose()
        if siblings is not None:
            siblings.close(loop if api is not None else None)

    app = FastAPI(title="GraphARC", version=__version__, lifespan=lifespan)
    app.state.auth = auth  # None: nobody signs in (loopback only); API routes check bearer tokens with it
    app.state.api = api
    app.state.sessions = api.sessions if api is not None else None  # else opened as the app starts
    install_problem_handlers(app)
    describe_problems(app)
    app.add_middleware(BodyLimits)
    app.add_middleware(SignedInOnly)  # with an auth file: /openapi.json, /docs, /redoc, /plugins too
    app.add_middleware(HostGuard, listed=allowed_hosts, signed_in=auth is not None)  # outermost: first
    if sessions is not None and auth is not None:  # as ``inbox`` says, narrowed for the type checker
        from grapharc.server.inbox.mount import mount_inbox

        mount_inbox(app, auth)

    @app.get("/healthz")
    def healthz() -> dict[str, Any]:
        """The process is up; ``ready``: it serves (``grapharc.server.starting`` answers false)."""
        return {"ok": True, "ready": True, "version": __version__}

    @app.get("/readyz")
    def readyz() -> dict[str, Any]:
        """It serves: graphs and stores loaded (``grapharc.server.starting`` answers 503 before)."""
        return {"ok": True, "ready": True}

    @app.get("/plugins")
    def plugins() -> dict[str, Any]:
        """The installed GraphARC distributions, their versions and what each registered (with an
        auth file, for signed-in callers only)."""
        from grapharc.plugins.report import plugin_report

        return plugin_report()

    if api is not None:
        from grapharc.server.api.routes import mount_api

        mount_api(app, api)
    if store is not None:
        from grapharc.server.api.routes import mount_store

        mount_store(app, store)
    index_routes(app.router.routes)
    return app
