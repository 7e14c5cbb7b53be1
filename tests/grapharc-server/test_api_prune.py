"""``threads.prune`` through the official ``langgraph-sdk`` clients (async and sync) against a real
``grapharc serve`` on SQLite: the stories in prune_stories.py, the prune announced on the server's
stderr, the auth file's delete rule, and a third party's checkpointer without LangGraph's ``prune``
(keep_latest refused with 501 naming it, delete still works)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_graphs import WAITER
from authz_setup import HERE, TOKENS, authz_server
from langgraph_sdk import get_client, get_sync_client
from langgraph_sdk.client import LangGraphClient
from prune_stories import (
    history_ids,
    keep_latest_then_delete,
    refuse_bad_input,
    refuse_busy_and_waiting_threads,
    refused,
    trail,
    waited_thread,
)
from server_process import ServerProcess, serving


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for the module, without an auth file."""
    sessions = tmp_path_factory.mktemp("prune") / "sessions"
    with serving(sessions, "--registry", "api_graphs:register") as process:
        yield process


@pytest.fixture(scope="module")
def url(server: ServerProcess) -> str:
    """The server's URL, from its announcement (read once)."""
    return str(server.json_announcement()["url"])


def test_keep_latest_keeps_each_threads_latest_checkpoint_and_delete_removes_threads(
        url: str, tmp_path: Path) -> None:
    asyncio.run(keep_latest_then_delete(get_client(url=url), url, tmp_path / "release"))


def test_a_thread_running_or_waiting_on_an_approval_refuses_the_whole_prune(url: str, tmp_path: Path) -> None:
    asyncio.run(refuse_busy_and_waiting_threads(get_client(url=url), tmp_path / "release"))


def test_a_strategy_or_thread_ids_the_route_does_not_take_are_refused(url: str, tmp_path: Path) -> None:
    asyncio.run(refuse_bad_input(get_client(url=url), tmp_path / "release"))


def test_the_sync_client_prunes_and_the_server_announces_who_pruned_which_threads(
        server: ServerProcess, url: str, tmp_path: Path) -> None:
    release = tmp_path / "release"
    release.touch()
    client = get_sync_client(url=url)
    threads = [str(client.threads.create(graph_id=WAITER)["thread_id"]) for _ in range(2)]
    for thread in threads:
        client.runs.wait(thread, WAITER, input={"release_file": str(release)})
    assert client.threads.prune(threads, strategy="keep_latest") == {"pruned_count": 2}
    server.stderr_line_containing(f"threads.prune (keep_latest) by api: {', '.join(threads)}")  # waits for it
    assert client.threads.prune(threads) == {"pruned_count": 2}
    server.stderr_line_containing(f"threads.prune (delete) by api: {', '.join(threads)}")
    assert not [t for t in client.threads.search(limit=1000) if t["thread_id"] in threads]


@pytest.fixture
def authz(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A server with authz_setup.py's people: alice and bob of acme, dave of globex, root an admin."""
    monkeypatch.setenv("PYTHONPATH", HERE)
    with authz_server(tmp_path) as url:
        yield url


def test_with_an_auth_file_a_caller_prunes_only_threads_they_may_delete(authz: str, tmp_path: Path) -> None:
    def as_user(name: str) -> LangGraphClient:
        return get_client(url=authz, headers={"Authorization": f"Bearer {TOKENS[name]}"})

    async def story() -> None:
        release = tmp_path / "release"
        release.touch()
        alice, bob, dave, root = (as_user(name) for name in ("alice", "bob", "dave", "root"))
        mine, other = [await waited_thread(alice, release, runs=2) for _ in range(2)]
        held = await history_ids(alice, mine)
        status, problem = await refused(bob.threads.prune([mine], strategy="keep_latest"))
        assert (status, problem["detail"]) == (403, f"bob may not delete thread {mine}")
        for caller, ids in ((dave, [mine]), (alice, [mine, "no-such-thread"])):  # dave cannot read it
            status, problem = await refused(caller.threads.prune(ids, strategy="keep_latest"))
            assert status == 404, problem
        assert await history_ids(alice, mine) == held
        assert await alice.threads.prune([mine], strategy="keep_latest") == {"pruned_count": 1}
        pruned = [e["detail"] for e in trail(authz, mine, {"Authorization": f"Bearer {TOKENS['alice']}"})
                  if e["kind"] == "pruned"]
        assert [entry["by"] for entry in pruned] == ["alice"]
        assert await root.threads.prune([mine, other]) == {"pruned_count": 2}
        assert (await refused(alice.threads.get(other)))[0] == 404

    asyncio.run(story())


def test_keep_latest_on_a_checkpointer_without_prune_is_refused_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([HERE, os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, str(Path(HERE) / "bare_saver_server.py"), "--port", "0", "--json",
               "--sessions", f"bare:{tmp_path / 'sessions'}", "--registry", "api_graphs:register"]

    async def story(url: str) -> None:
        release = tmp_path / "release"
        release.touch()
        client = get_client(url=url)
        thread = await waited_thread(client, release, runs=2)
        held = await history_ids(client, thread)
        status, problem = await refused(client.threads.prune([thread], strategy="keep_latest"))
        assert status == 501 and "SqliteSaver" in problem["detail"] and "prune" in problem["detail"], problem
        assert await history_ids(client, thread) == held
        assert not [e for e in trail(url, thread) if e["kind"] == "pruned"]
        assert await client.threads.prune([thread]) == {"pruned_count": 1}
        assert (await refused(client.threads.get(thread)))[0] == 404

    with ServerProcess(command) as process:
        asyncio.run(story(str(process.json_announcement()["url"])))

