"""Assistants created over HTTP through the official clients (async and sync) on a real ``grapharc
serve`` over SQLite: named, versioned configurations of registered graphs that runs start from,
checked as a run's config is; the bad input refused naming it; with an auth file, changing one
needs the grant to run its graph, and the change log names who changed which assistant."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from api_graphs import WAITER
from assistant_stories import (
    ADA,
    CEILING,
    SUPERSTEPS,
    a_graphs_own_assistant_is_read_only,
    bad_input_is_refused_naming_it_and_nothing_is_stored,
    create_read_search_and_count,
    delete_waits_for_its_runs,
    runs_start_from_the_assistants_config,
    version_and_choose_the_version_runs_use,
)
from authz_setup import HERE, authz_server, client
from config_graphs import CONFIGURED
from langgraph_sdk import get_client, get_sync_client
from server_process import ServerProcess, serving

from grapharc.stores import open_store, store_uri

REGISTRIES = ("--registry", "api_graphs:register", "--registry", "config_graphs:register_configured",
              "--max-iterations", str(CEILING))


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("assistants") / "sessions"


@pytest.fixture(scope="module")
def url(sessions: Path) -> Iterator[str]:
    """One server for the module's tests (each makes assistants of its own)."""
    with serving(sessions, *REGISTRIES) as server:
        yield server.json_announcement()["url"]


def test_an_assistant_is_created_read_searched_and_counted(url: str) -> None:
    asyncio.run(create_read_search_and_count(get_client(url=url)))


def test_runs_of_an_assistant_start_from_its_config_and_name_it(url: str) -> None:
    asyncio.run(runs_start_from_the_assistants_config(get_client(url=url)))


def test_an_update_is_a_new_version_and_set_latest_chooses_the_one_runs_use(url: str) -> None:
    asyncio.run(version_and_choose_the_version_runs_use(get_client(url=url)))


def test_an_assistant_with_a_run_in_flight_is_not_deleted(url: str, tmp_path: Path) -> None:
    asyncio.run(delete_waits_for_its_runs(get_client(url=url), tmp_path / "release"))


def test_a_graphs_own_assistant_cannot_be_changed(url: str) -> None:
    asyncio.run(a_graphs_own_assistant_is_read_only(get_client(url=url)))


def test_bad_input_is_refused_naming_it_and_nothing_is_stored(url: str) -> None:
    asyncio.run(bad_input_is_refused_naming_it_and_nothing_is_stored(get_client(url=url), url))


def test_the_sync_client_creates_runs_versions_and_deletes_an_assistant(url: str) -> None:
    sdk = get_sync_client(url=url)
    assistant = sdk.assistants.create(CONFIGURED, config=ADA, name="sync")["assistant_id"]
    waited = sdk.runs.wait(None, assistant, input={}, config={"tags": ["red"]})
    assert waited["heard"] == [f"ada|mock/careful|plain|red|{SUPERSTEPS}"]  # the run's tags replace its own
    sdk.assistants.update(assistant, context={"tone": "formal"})
    values = [part.data for part in sdk.runs.stream(None, assistant, input={}) if part.event == "values"]
    assert values[-1]["heard"] == [f"ada|mock/careful|formal|blue|{SUPERSTEPS}"]
    assert [v["version"] for v in sdk.assistants.get_versions(assistant)] == [2, 1]
    assert sdk.assistants.set_latest(assistant, 1)["context"] == {}
    assert [a["assistant_id"] for a in sdk.assistants.search(name="SYNC")] == [assistant]
    sdk.assistants.delete(assistant)
    with pytest.raises(httpx.HTTPStatusError) as gone:
        sdk.assistants.get(assistant)
    assert gone.value.response.status_code == 404


def test_the_change_log_says_who_changed_which_assistant_by_key_name(url: str, sessions: Path) -> None:
    sdk = get_sync_client(url=url)
    assistant = sdk.assistants.create(CONFIGURED, config=ADA, context={"tone": "formal"})["assistant_id"]
    sdk.assistants.update(assistant, metadata={"team": "desk"})
    sdk.assistants.set_latest(assistant, 1)
    sdk.assistants.delete(assistant)
    store = open_store(store_uri(sessions, "assistants"), kind="assistants")
    try:
        log = store.changes(assistant)
    finally:
        store.close()
    assert [(c.action, c.version, c.by) for c in log] == [
        ("create", 1, "api"), ("update", 2, "api"), ("set_latest", 1, "api"), ("delete", 1, "api")]
    assert log[1].keys == ["config.configurable.model", "config.configurable.user_id", "config.tags",
                           "context.tone", "metadata.team"]
    assert "careful" not in repr(log) and "formal" not in repr(log)


def test_with_an_auth_file_changing_an_assistant_needs_the_grant_to_run_its_graph(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", HERE)
    with authz_server(tmp_path) as base, client(base, "bob") as bob, client(base, "dave") as dave:
        made = bob.post("/assistants", json={"graph_id": "waiter", "name": "bob's waiter"})
        assert made.status_code == 200, made.text
        assistant = made.json()["assistant_id"]
        refused = dave.post("/assistants", json={"graph_id": "waiter"})
        assert refused.status_code == 403 and "waiter" in refused.json()["detail"]
        for answer in (dave.get(f"/assistants/{assistant}"), dave.delete(f"/assistants/{assistant}"),
                       dave.patch(f"/assistants/{assistant}", json={"name": "mine"})):
            assert answer.status_code == 404  # not theirs to see: as if it did not exist
        assert assistant not in [a["assistant_id"] for a in dave.post("/assistants/search", json={}).json()]
        moved = bob.patch(f"/assistants/{assistant}", json={"graph_id": "relay"})
        assert moved.status_code == 403 and "relay" in moved.json()["detail"]  # bob may not run it
        assert bob.patch(f"/assistants/{assistant}", json={"name": "renamed"}).json()["version"] == 2
        assert bob.delete(f"/assistants/{assistant}").status_code == 204
    store = open_store(store_uri(tmp_path / "sessions", "assistants"), kind="assistants")
    try:
        assert [(c.action, c.by) for c in store.changes(assistant)] == [
            ("create", "bob"), ("update", "bob"), ("delete", "bob")]
    finally:
        store.close()


def test_assistants_outlive_the_server(tmp_path: Path) -> None:
    with serving(tmp_path / "sessions", *REGISTRIES) as server:
        sdk = get_sync_client(url=server.json_announcement()["url"])
        assistant = sdk.assistants.create(CONFIGURED, config=ADA)["assistant_id"]
        sdk.assistants.update(assistant, metadata={"kept": True})
    with serving(tmp_path / "sessions", *REGISTRIES) as server:
        sdk = get_sync_client(url=server.json_announcement()["url"])
        assert sdk.assistants.get(assistant)["metadata"] == {"kept": True}
        waited = sdk.runs.wait(None, assistant, input={})
        assert waited["heard"] == [f"ada|mock/careful|plain|blue|{SUPERSTEPS}"]


def test_a_store_plugin_without_an_assistant_store_still_serves_its_graphs_assistants(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([HERE, os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, str(Path(HERE) / "bare_saver_server.py"), "--port", "0", "--json",
               "--sessions", f"bare:{tmp_path / 'sessions'}", "--registry", "api_graphs:register"]
    with ServerProcess(command) as process:
        client = get_sync_client(url=str(process.json_announcement()["url"]))
        assert client.assistants.get(WAITER)["graph_id"] == WAITER
        assert WAITER in {a["assistant_id"] for a in client.assistants.search(limit=100)}
        with pytest.raises(Exception) as refused:
            client.assistants.create(WAITER, name="mine")
        response = refused.value.response  # type: ignore[attr-defined]
        assert response.status_code == 501 and "'bare'" in response.json()["detail"], response.text
        assert [a["assistant_id"] for a in client.assistants.search(graph_id=WAITER)] == [WAITER]
