"""The long-term store over HTTP (``/store``), through the official SDK's async and sync clients
against a real ``grapharc serve``: put, get, search (query, filter, limit, offset), delete,
namespaces and TTLs; refusals as problem documents naming what is wrong; with an auth file each
user reads and writes only the namespaces granted (store_stories.py tells the stories)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph_sdk import get_client, get_sync_client
from langgraph_sdk.client import LangGraphClient
from server_process import PATIENCE_SECONDS, grapharc_serve, serving
from store_stories import Synced, items_expire, put_get_search_delete, refused

from grapharc.memory.hashing_embedder import HashingEmbedder
from grapharc.memory.retrieval import cosine
from grapharc.server.auth import token_digest
from grapharc.stores.uris import known_schemes

TOKENS = {name: f"store-token-for-{name}-0123456789" for name in ("alice", "bob")}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One ``grapharc serve`` of the store alone (no graphs registered) for the module's tests."""
    folder = tmp_path_factory.mktemp("store")
    with serving(folder / "sessions") as served:
        yield str(served.json_announcement()["url"])


def test_a_graph_the_server_runs_writes_to_the_store_it_serves(tmp_path: Path) -> None:
    with serving(tmp_path / "sessions", "--registry", "store_graphs:register") as served:
        client = get_sync_client(url=served.json_announcement()["url"])
        thread = client.threads.create(graph_id="remember")["thread_id"]
        done = client.runs.wait(thread, "remember", input={"who": "ada", "note": "the engine weaves"})
        assert done["found"] == ["latest"]
        kept = client.store.get_item(["notes", "ada"], "latest")
    assert kept is not None and kept["value"] == {"text": "the engine weaves"}


def test_the_async_client_puts_gets_searches_lists_and_deletes(server: str) -> None:
    asyncio.run(put_get_search_delete(get_client(url=server), "async-story"))


def test_the_sync_client_puts_gets_searches_lists_and_deletes(server: str) -> None:
    asyncio.run(put_get_search_delete(Synced(get_sync_client(url=server)), "sync-story"))


def test_an_item_with_a_ttl_expires_and_one_without_stays(server: str) -> None:
    asyncio.run(items_expire(get_client(url=server), "ttl-story"))


@pytest.mark.parametrize(("method", "path", "body", "says"), [
    ("PUT", "/store/items", {"namespace": ["a.b"], "key": "k", "value": {}},
     "namespace has the label 'a.b', which holds a period ('.')"),
    ("PUT", "/store/items", {"namespace": [], "key": "k", "value": {}}, "namespace has no labels"),
    ("PUT", "/store/items", {"namespace": ["a", ""], "key": "k", "value": {}},
     "namespace has the label '', which is empty"),
    ("PUT", "/store/items", {"namespace": ["a"], "key": "", "value": {}}, "key '' is not a key"),
    ("PUT", "/store/items", {"namespace": ["langgraph"], "key": "k", "value": {}},
     'the store refused the request: Root label for namespace cannot be "langgraph"'),
    ("DELETE", "/store/items", {"namespace": ["a", "b.c"], "key": "k"},
     "namespace has the label 'b.c', which holds a period ('.')"),
    ("POST", "/store/items/search", {"namespace_prefix": ["a"], "filter": {"n": {"$near": 1}}},
     "the store refused the request: filter on 'n' uses the operator '$near'"),
    ("POST", "/store/namespaces", {"suffix": ["x.y"]}, "suffix has the label 'x.y', which holds a period"),
])
def test_a_bad_namespace_key_or_filter_is_a_problem_document_naming_it(server: str, method: str, path: str,
                                                                      body: dict, says: str) -> None:
    with httpx.Client(base_url=server, timeout=30) as client:
        answer = client.request(method, path, json=body)
        assert answer.status_code == 422, answer.text
        assert answer.headers["content-type"] == "application/problem+json"
        assert answer.json()["detail"].startswith(says) and "Traceback" not in answer.text
        assert client.post("/store/namespaces", json={"prefix": ["a"]}).json() == {"namespaces": []}


def test_a_value_ttl_or_page_out_of_bounds_is_refused_naming_the_field(server: str) -> None:
    with httpx.Client(base_url=server, timeout=30) as client:
        for body, field in (({"namespace": ["a"], "key": "k", "value": ["x"]}, "value"),
                            ({"namespace": ["a"], "key": "k", "value": {}, "ttl": -1}, "ttl")):
            answer = client.put("/store/items", json=body)
            assert answer.status_code == 422 and answer.json()["errors"][0]["loc"] == ["body", field]
        searched = client.post("/store/items/search", json={"namespace_prefix": [], "limit": 0})
        assert searched.status_code == 422 and searched.json()["errors"][0]["loc"] == ["body", "limit"]
        dotted = client.get("/store/items", params={"namespace": "a..b", "key": "k"})
        assert dotted.status_code == 422
        assert dotted.json()["detail"] == "namespace has the label '', which is empty"


def test_a_body_over_the_limit_is_413_for_a_put_and_a_delete_alike(server: str) -> None:
    huge = "x" * 1_100_000
    with httpx.Client(base_url=server, timeout=30) as client:
        for method in ("PUT", "DELETE"):
            answer = client.request(method, "/store/items",
                                    json={"namespace": ["a"], "key": huge, "value": {}})
            assert answer.status_code == 413, (method, answer.text)
            assert "over 1000000 bytes" in answer.json()["detail"]


def _auth_file(folder: Path) -> Path:
    """alice and bob with everyone's store grant (their own name); alice is also a librarian,
    who uses the shared ``library`` namespaces."""
    tokens = "".join(f'\n[tokens.{name}]\nsha256 = "{token_digest(token)}"\nuser = "{name}"\n'
                     for name, token in TOKENS.items())
    path = folder / "auth.toml"
    path.write_text('secret = "a test secret that is long enough"\n\n[roles.librarian]\n'
                    'store = ["library"]\n\n[users.alice]\nroles = ["librarian"]\n\n[users.bob]\n' + tokens,
                    encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def server_with_auth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("store-auth")
    with serving(folder / "sessions", "--auth-file", str(_auth_file(folder))) as served:
        yield str(served.json_announcement()["url"])


def _client(url: str, who: str) -> LangGraphClient:
    return get_client(url=url, headers={"Authorization": f"Bearer {TOKENS[who]}"})


def test_two_users_each_see_only_their_own_items(server_with_auth: str) -> None:
    async def story() -> None:
        alice, bob = _client(server_with_auth, "alice"), _client(server_with_auth, "bob")
        await alice.store.put_item(["alice", "notes"], "plan", {"text": "alice's secret plan"})
        await bob.store.put_item(["bob", "notes"], "plan", {"text": "bob's secret plan"})
        await alice.store.put_item(["library", "books"], "loom", {"text": "a shared secret plan"})

        for who, client in (("alice", alice), ("bob", bob)):
            everything = (await client.store.search_items([], query="secret plan", limit=100))["items"]
            assert {item["namespace"][0] for item in everything} <= {who, "library"}
            assert [item["value"]["text"] for item in everything if item["namespace"][0] == who] == [
                f"{who}'s secret plan"]
            assert {item["namespace"][0] for item in (await client.store.search_items(["*"]))["items"]} \
                <= {who, "library"}
        assert (await alice.store.list_namespaces())["namespaces"] == [
            ["alice", "notes"], ["library", "books"]]
        assert (await bob.store.list_namespaces())["namespaces"] == [["bob", "notes"]]
        assert (await bob.store.list_namespaces(max_depth=1))["namespaces"] == [["bob"]]
        assert [i["key"] for i in (await alice.store.search_items(["library"]))["items"]] == ["loom"]

        status, problem = await refused(bob.store.put_item(["alice", "notes"], "plan",
                                                           {"text": "overwritten"}))
        assert status == 403 and problem["detail"] == (
            "bob may not use the store namespace 'alice.notes'; their store grants cover bob")
        for call in (lambda: bob.store.get_item(["alice", "notes"], "plan"),
                     lambda: bob.store.delete_item(["alice", "notes"], "plan"),
                     lambda: bob.store.search_items(["alice"]),
                     lambda: bob.store.list_namespaces(prefix=["library"]),
                     lambda: bob.store.put_item(["library", "books"], "loom", {"text": "defaced"})):
            assert (await refused(call()))[0] == 403
        assert (await alice.store.get_item(["alice", "notes"], "plan"))["value"] == {
            "text": "alice's secret plan"}
        assert (await alice.store.get_item(["library", "books"], "loom"))["value"] == {
            "text": "a shared secret plan"}

    asyncio.run(story())


def test_without_a_token_the_store_answers_401(server_with_auth: str) -> None:
    answer = httpx.post(f"{server_with_auth}/store/namespaces", json={}, timeout=30)
    assert answer.status_code == 401 and answer.headers["content-type"] == "application/problem+json"


def test_the_default_store_is_a_sqlite_file_beside_the_sessions_and_outlives_the_server(
        tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    with serving(sessions) as first:
        announced = first.json_announcement()
        assert announced["store"] == f"sqlite:{sessions}/store.db"
        get_sync_client(url=announced["url"]).store.put_item(["kept"], "k", {"text": "still here"})
    assert (sessions / "store.db").is_file()
    with serving(sessions) as second:
        found = get_sync_client(url=second.json_announcement()["url"]).store.get_item(["kept"], "k")
    assert found is not None and found["value"] == {"text": "still here"}


def test_a_store_uri_nobody_serves_stops_the_server_with_one_line(tmp_path: Path) -> None:
    done = subprocess.run(grapharc_serve("--port", "0", "--sessions", str(tmp_path), "--store", "nosuch:x"),
                          capture_output=True, text=True, timeout=PATIENCE_SECONDS)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[0] == ("error: unknown store scheme 'nosuch'; known: "
                                           + ", ".join(sorted(known_schemes())))
    assert "Traceback" not in done.stderr


def test_a_store_embedder_spec_adds_the_vector_channel_to_served_search(tmp_path: Path) -> None:
    with serving(tmp_path / "sessions", "--store", f"sqlite:{tmp_path / 'store.db'}",
                 "--store-embedder", "hashing:64") as served:
        announced = served.json_announcement()
        client = get_sync_client(url=announced["url"])
        client.store.put_item(["docs"], "k", {"title": "the analytical engine", "body": "weaves"},
                              index=["title"])
        found = client.store.search_items(["docs"], query="engine")["items"]
    assert announced["store_embedder"] == "hashing:64"
    wanted, kept = HashingEmbedder(64).embed(["engine", "the analytical engine"])
    assert [item["key"] for item in found] == ["k"]
    assert found[0]["score"] == pytest.approx(1.0 + cosine(wanted, kept))  # BM25 scaled to 1.0, plus cosine


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_bad_store_embedder_spec_stops_the_server_naming_it(tmp_path: Path, json_flag: list[str]) -> None:
    done = subprocess.run(grapharc_serve("--port", "0", "--sessions", str(tmp_path), "--store", "memory:",
                                         "--store-embedder", "hashing:wide", *json_flag),
                          capture_output=True, text=True, timeout=PATIENCE_SECONDS)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    said = json.loads(done.stdout)["error"]["message"] if json_flag else done.stderr.splitlines()[0]
    assert "embedder spec 'hashing:wide' does not give a number of dimensions" in said


STORE_FIELDS = ["namespace", "key", "value", "index", "ttl", "namespace_prefix", "filter", "limit", "offset",
                "query", "refresh_ttl", "prefix", "suffix", "max_depth"]
ODD_VALUES = [10**30, -1, 0, 1e308, True, None, "", ".", "a.b", "\x00", "*", "$gt", "langgraph", "x" * 3000]


def _store_values() -> st.SearchStrategy[Any]:
    leaves = st.one_of(st.sampled_from(ODD_VALUES), st.integers(),
                       st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12))
    return st.recursive(leaves, lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(["$gt", "$eq", "$ne", "$lte", "$in", "text", "n"])
                        | st.text(max_size=6), inner, max_size=4)), max_leaves=10)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(route=st.sampled_from([("PUT", "/store/items"), ("DELETE", "/store/items"),
                              ("POST", "/store/items/search"), ("POST", "/store/namespaces")]),
       body=st.dictionaries(st.sampled_from(STORE_FIELDS), _store_values(), max_size=6))
def test_any_store_body_is_answered_without_a_5xx_or_a_traceback(server: str, route: tuple[str, str],
                                                                 body: dict[str, Any]) -> None:
    method, path = route
    answer = httpx.request(method, server + path, json=body, timeout=30)
    assert answer.status_code < 500, (method, path, body, answer.text)
    assert "Traceback" not in answer.text
    if answer.status_code >= 400:
        assert answer.headers["content-type"] == "application/problem+json" and answer.json()["detail"]
