"""Authorization per thread, against a real ``grapharc serve`` with an auth file (authz_setup.py's
people): a thread records who created it; a user reads only what their roles let them (their own,
their tenant's, all), deletes only what they may (owner, or admin), runs only the assistants granted;
a thread they may not read answers exactly as one that does not exist."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from authz_setup import HERE, TOKENS, authz_server, client, new_thread, paused_credit_thread
from langgraph_sdk import get_sync_client

from grapharc.session.manager import SessionManager


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The module's one server, for the tests that read only threads they make themselves."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", HERE)
        with authz_server(tmp_path_factory.mktemp("authz")) as url:
            yield url


@pytest.fixture
def fresh_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A server over sessions in ``tmp_path`` of the test's own, for the tests that search or count
    every thread a user may read (or add threads to its sessions)."""
    monkeypatch.setenv("PYTHONPATH", HERE)
    with authz_server(tmp_path) as url:
        yield url


def _detail(response: Any, status: int) -> str:
    assert response.status_code == status, response.text
    return str(response.json()["detail"])


def test_bob_who_decides_nothing_cannot_delete_alices_paused_thread_but_an_admin_can(server):
    """The issue's repro: bob (``may_decide = []``) DELETEd alice's paused thread: 204."""
    with client(server, "alice") as alice, client(server, "bob") as bob, client(server, "dave") as dave, \
            client(server, "root") as root:
        thread = paused_credit_thread(alice)
        assert bob.get(f"/threads/{thread}").status_code == 200  # bob reads acme's threads
        refused = bob.delete(f"/threads/{thread}")
        assert _detail(refused, 403) == f"bob may not delete thread {thread}"
        assert dave.delete(f"/threads/{thread}").status_code == 404  # dave does not even see it
        assert alice.get(f"/threads/{thread}").json()["status"] == "interrupted"
        assert root.delete(f"/threads/{thread}").status_code == 204
        assert alice.get(f"/threads/{thread}").status_code == 404


def test_an_auth_file_written_before_roles_keeps_bob_from_deleting_alices_thread(tmp_path, monkeypatch):
    """The repro with an auth file as they were written then (no roles, tenants or JWTs: every user
    now reads and deletes only the threads they created)."""
    from argon2 import PasswordHasher
    from server_process import ServerProcess, grapharc_serve

    from grapharc.server.auth import token_digest

    auth = tmp_path / "auth.toml"
    password = PasswordHasher().hash("a password")
    auth.write_text("".join(f'[users.{name}]\npassword_hash = "{password}"\nmay_decide = {decides}\n\n'
                            f'[tokens.{name}]\n'
                            f'sha256 = "{token_digest(TOKENS[name])}"\nuser = "{name}"\n\n'
                            for name, decides in (("alice", '["credit-approval/*"]'), ("bob", "[]"))))
    monkeypatch.setenv("PYTHONPATH", HERE)
    command = grapharc_serve("--port", "0", "--json", "--sessions", str(tmp_path / "sessions"),
                             "--registry", "api_graphs:register", "--auth-file", str(auth))
    with ServerProcess(command) as served:
        url = served.json_announcement()["url"]
        with client(url, "alice") as alice, client(url, "bob") as bob:
            thread = paused_credit_thread(alice)
            assert bob.delete(f"/threads/{thread}").status_code == 404
            assert alice.get(f"/threads/{thread}").json()["status"] == "interrupted"


def test_the_owner_deletes_their_own_thread(server):
    with client(server, "dave") as dave:
        thread = new_thread(dave)
        assert dave.delete(f"/threads/{thread}").status_code == 204


def test_a_thread_a_user_may_not_read_answers_as_a_thread_that_does_not_exist(server):
    with client(server, "alice") as alice, client(server, "dave") as dave:
        thread = paused_credit_thread(alice)
        (run,) = alice.get(f"/threads/{thread}/runs").json()
        asks = [("GET", ""), ("GET", "/state"), ("POST", "/history"), ("GET", "/trace"), ("GET", "/runs"),
                ("GET", f"/runs/{run['run_id']}"), ("GET", f"/runs/{run['run_id']}/join"),
                ("GET", f"/runs/{run['run_id']}/stream"), ("POST", f"/runs/{run['run_id']}/cancel"),
                ("POST", "/events"), ("DELETE", ""), ("POST", "/runs/wait"), ("POST", "/state"),
                ("POST", "/copy")]
        bodies = {"/events": {"kind": "note"}, "/history": {}, "/state": {"values": {"notes": []}},
                  "/runs/wait": {"assistant_id": "credit-approval", "command": {"resume": "approved"}}}
        for method, path in asks:
            hidden = dave.request(method, f"/threads/{thread}{path}", json=bodies.get(path))
            missing = dave.request(method, f"/threads/no-such-thread{path}", json=bodies.get(path))
            assert hidden.status_code == missing.status_code == 404, (method, path, hidden.text)
            assert hidden.json() == {**missing.json(),
                                     "detail": missing.json()["detail"].replace("no-such-thread", thread)}
        assert alice.get(f"/threads/{thread}").json()["status"] == "interrupted"


def test_search_and_count_show_each_user_the_threads_they_may_read(fresh_server, tmp_path):
    with client(fresh_server, "alice") as alice, client(fresh_server, "bob") as bob, \
            client(fresh_server, "dave") as dave, client(fresh_server, "root") as root:
        mine, colleagues, globex = new_thread(alice), new_thread(bob), new_thread(dave)
        older = _thread_without_owner(tmp_path / "sessions")
        seen = {name: {t["thread_id"] for t in who.post("/threads/search", json={"limit": 100}).json()}
                for name, who in (("alice", alice), ("bob", bob), ("dave", dave), ("root", root))}
        counted = {name: who.post("/threads/count", json={}).json()
                   for name, who in (("alice", alice), ("dave", dave), ("root", root))}
    assert seen == {"alice": {mine, colleagues, older}, "bob": {mine, colleagues, older},  # acme is ACME
                    "dave": {globex, older}, "root": {mine, colleagues, globex, older}}
    assert counted == {"alice": 3, "dave": 2, "root": 4}


def test_the_sdk_client_of_a_user_finds_only_their_threads(fresh_server):
    alice = get_sync_client(url=fresh_server, headers={"Authorization": f"Bearer {TOKENS['alice']}"})
    dave = get_sync_client(url=fresh_server, headers={"Authorization": f"Bearer {TOKENS['dave']}"})
    made = dave.threads.create(graph_id="credit-approval")["thread_id"]
    dave.runs.wait(made, "credit-approval", input={"application_id": "LN-1020"}, raise_error=False)  # fails
    assert [t["thread_id"] for t in dave.threads.search()] == [made]
    assert alice.threads.search() == [] and alice.threads.count() == 0
    with pytest.raises(httpx.HTTPStatusError, match=f"no session has thread id '{made}'") as refused:
        alice.threads.get(made)
    assert refused.value.response.status_code == 404


def test_threads_made_before_owners_were_recorded_are_read_by_everyone_and_deleted_by_admins(
        fresh_server, tmp_path):
    """A thread with no owner (an older database's, or the CLI's) keeps the visibility every thread
    had before; deleting it takes ``delete = "all"``."""
    older = _thread_without_owner(tmp_path / "sessions")
    with client(fresh_server, "dave") as dave, client(fresh_server, "root") as root:
        assert dave.get(f"/threads/{older}").json()["thread_id"] == older
        assert _detail(dave.delete(f"/threads/{older}"), 403) == f"dave may not delete thread {older}"
        assert root.delete(f"/threads/{older}").status_code == 204


def test_a_user_runs_only_the_assistants_their_roles_grant(fresh_server):
    with client(fresh_server, "alice") as alice, client(fresh_server, "dave") as dave:
        refused = dave.post("/threads", json={"metadata": {"graph_id": "waiter"}})
        assert _detail(refused, 403) == "dave may not run assistant 'waiter'"
        stateless = dave.post("/runs/wait", json={"assistant_id": "waiter", "input": {}})
        assert _detail(stateless, 403) == "dave may not run assistant 'waiter'"
        assert dave.post("/threads/count", json={}).json() == 0  # nothing was left behind
        assert new_thread(alice, "waiter")  # alice's acme-desk role runs it


def test_a_thread_created_through_a_run_records_its_creator(server):
    with client(server, "alice") as alice, client(server, "dave") as dave:
        made = alice.post("/threads/by-run-1/runs/wait", json={
            "assistant_id": "credit-approval", "input": {"application_id": "LN-1020"},
            "if_not_exists": "create"})
        assert made.status_code == 200, made.text
        taken = dave.post("/threads", json={"thread_id": "by-run-1", "if_exists": "do_nothing",
                                            "metadata": {"graph_id": "credit-approval"}})
        assert taken.status_code == 409 and "values" not in taken.text  # an id is taken; nothing more
        trail = alice.get("/threads/by-run-1/trace").text.splitlines()[0]
    assert '"owner": "alice"' in trail and '"tenant": "acme"' in trail


def _thread_without_owner(sessions: Path) -> str:
    """A thread created by the CLI's library (no owner), in the server's sessions."""
    from api_graphs import register

    manager = SessionManager(sessions)
    try:
        register(manager)
        return manager.create("credit-approval").thread_id
    finally:
        manager.close()
