"""Webhook stories told against a real ``grapharc serve`` (over SQLite or PostgreSQL) and the real
receiver of ``webhook_receiver``: runs created with the official ``langgraph-sdk`` client."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from langgraph_sdk import get_client
from server_process import ServerProcess, grapharc_serve
from webhook_receiver import Receiver, wait_until

from grapharc.stores import open_store, store_uri
from grapharc.webhooks.records import DELIVERED

HERE = Path(__file__).resolve().parent
FAILING = "failing"
HOOK_OPTIONS = ("--webhook-timeout", "2", "--webhook-attempts", "20")
"""A short bound per attempt (a killed server's claim runs out soon after), and attempts enough
for any story's 500s."""


def hook_server(sessions: str, *options: str) -> ServerProcess:
    """A ``grapharc serve`` of api_graphs.py's graphs over ``sessions``, sending hooks as ``options``
    say (``PYTHONPATH`` must lead to this folder: ``beside``)."""
    return ServerProcess(grapharc_serve("--port", "0", "--json", "--sessions", sessions,
                                        "--registry", "api_graphs:register", *HOOK_OPTIONS, *options))


def create_run(url: str, webhook: str, **input_values: Any) -> dict[str, Any]:
    """A background run of the failing graph (not failing unless asked) on a new thread, with
    ``webhook``, created through the SDK; its record as created."""
    async def create() -> dict[str, Any]:
        client = get_client(url=url)
        thread = await client.threads.create(graph_id=FAILING)
        return dict(await client.runs.create(thread["thread_id"], FAILING,
                                             input={"fail": False, **input_values}, webhook=webhook))

    return asyncio.run(create())


def a_marker_arrives(url: str, receiver: Receiver, path: str) -> None:
    """Run once more with a hook to ``path`` and wait for it: every hook claimed before it was due
    has been sent by then (a look claims the due deliveries oldest first)."""
    create_run(url, receiver.url(path))
    receiver.wait_for(path)


def a_hook_pending_at_a_kill_arrives_once_after_restart(
        receiver: Receiver, sessions: str,
        start: Callable[[], AbstractContextManager[ServerProcess]]) -> None:
    """The receiver answers 500 while the run's server (over ``sessions``) is SIGKILLed after the
    run ended; restarted, the server delivers the hook once the receiver takes it and records it
    delivered, and neither it nor a second restart sends the delivered hook again."""
    receiver.answer("/kept", then=500)
    with start() as first:
        url = first.json_announcement()["url"]
        run = create_run(url, receiver.url("/kept"))
        receiver.wait_for("/kept", answered=500)  # the run ended; its hook was refused
        first.send(signal.SIGKILL)
        first.wait()
    receiver.answer("/kept", then=200)
    with start() as second:
        url = second.json_announcement()["url"]
        taken = receiver.wait_for("/kept", answered=200)
        assert taken[0].json()["run_id"] == run["run_id"] and taken[0].json()["status"] == "success"
        recorded_delivered(sessions, run["run_id"])
        a_marker_arrives(url, receiver, "/after-first-restart")
        second.send(signal.SIGKILL)
        second.wait()
    with start() as third:
        a_marker_arrives(third.json_announcement()["url"], receiver, "/after-second-restart")
    hits = receiver.at("/kept")
    assert [hit.answered for hit in hits if hit.answered == 200] == [200]
    assert hits[-1].answered == 200  # nothing was sent after the receiver took it
    assert {hit.headers["X-GraphARC-Delivery"] for hit in hits} == {run["run_id"]}
    assert len({hit.body for hit in hits}) == 1  # every attempt sent the same record


def recorded_delivered(sessions: str, run_id: str) -> None:
    """Wait until the webhook store at ``sessions`` records run ``run_id``'s hook delivered."""
    store = open_store(store_uri(sessions, "webhooks"), kind="webhooks")
    try:
        wait_until(lambda: (found := store.get(run_id)) is not None and found.status == DELIVERED,
                   f"the hook of run {run_id} to be recorded delivered")
    finally:
        store.close()


def beside(monkeypatch: Any) -> None:
    """Let a server started by the test import this folder's graphs (``monkeypatch``: pytest's)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])))
