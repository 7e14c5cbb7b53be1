"""Helpers for the inbox tests: a sessions directory with paused credit threads, an auth file,
a real ``grapharc serve`` process over both (or its app in this process, with the API), and a
signed-in httpx client."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from api_graphs import GATED_WAITER
from argon2 import PasswordHasher
from fastapi.testclient import TestClient
from server_process import ServerProcess, grapharc_serve

from grapharc.examples.approval import GRAPH_NAME, REQUEST_DAYS, register_credit_graph
from grapharc.server.api.context import ApiContext, open_context
from grapharc.server.app import create_app
from grapharc.server.auth import load_auth, token_digest
from grapharc.session.manager import SessionManager
from grapharc.session.records import Approval

PASSWORDS = {"alice": "correct horse battery", "bob": "staple tuna", "carol": "audit every ledger"}
TOKEN = "test-token-for-alice-0123456789"
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def write_auth_file(path: Path, alice_may_decide: str = f"{GRAPH_NAME}/*") -> Path:
    """alice decides the credit desk's approvals (or those ``alice_may_decide`` matches); bob may sign
    in but decide only another graph's; carol, an auditor, reads every thread and decides nothing."""
    hasher = PasswordHasher()
    path.write_text(f'''secret = "a test secret that is long enough"

[users.alice]
password_hash = "{hasher.hash(PASSWORDS['alice'])}"
decides_for = ["credit-desk"]
may_decide = ["{alice_may_decide}"]

[users.bob]
password_hash = "{hasher.hash(PASSWORDS['bob'])}"
decides_for = ["credit-desk"]
may_decide = ["other-graph/*"]

[roles.auditor]
read = "all"

[users.carol]
password_hash = "{hasher.hash(PASSWORDS['carol'])}"
roles = ["auditor"]

[tokens.ci]
sha256 = "{token_digest(TOKEN)}"
user = "alice"
''', encoding="utf-8")
    return path


def pause_credit_thread(sessions: Path, thread: str, *, asked_days_ago: float = 0.0) -> Approval:
    """Run the credit demo's LN-7310 (above the sign-off limit) until it waits on the credit desk;
    ``asked_days_ago`` beyond REQUEST_DAYS leaves an approval that has already expired."""
    manager = SessionManager(sessions, clock=lambda: time.time() - asked_days_ago * 86400)
    try:
        register_credit_graph(manager)
        session = manager.start(GRAPH_NAME, {"application_id": "LN-7310"}, thread_id=thread)
    finally:
        manager.close()
    assert session.status == "paused"
    return session.holds[0]


@contextmanager
def reading(sessions: Path) -> Iterator[SessionManager]:
    """A manager to read what the server wrote to ``sessions``."""
    manager = SessionManager(sessions)
    try:
        yield manager
    finally:
        manager.close()


EXPIRED_DAYS = REQUEST_DAYS + 1


@dataclass
class Served:
    """A running inbox server and what it serves."""

    url: str
    sessions: Path
    server: ServerProcess


@contextmanager
def serve_inbox(tmp: Path) -> Iterator[Served]:
    """``grapharc serve`` on 127.0.0.1 with an auth file over a sessions directory in ``tmp``."""
    sessions = tmp / "sessions"
    sessions.mkdir(exist_ok=True)
    auth = write_auth_file(tmp / "auth.toml")
    with ServerProcess(grapharc_serve("--port", "0", "--json", "--auth-file", str(auth),
                                      "--sessions", str(sessions))) as server:
        url = server.json_announcement()["url"]
        yield Served(url, sessions, server)


def csrf_of(page: httpx.Response) -> str:
    """The CSRF token a page's form carries."""
    found = CSRF.search(page.text)
    assert found, page.text
    return found.group(1)


def sign_in(client: httpx.Client, user: str) -> None:
    """Sign ``user`` in to the pages through ``client`` (an httpx client, or FastAPI's TestClient)."""
    form = client.get("/inbox/signin")
    answer = client.post("/inbox/signin", follow_redirects=False, data={
        "username": user, "password": PASSWORDS[user], "csrf": csrf_of(form), "next": "/inbox"})
    assert answer.status_code == 303, answer.text


@contextmanager
def signed_in(url: str, user: str) -> Iterator[httpx.Client]:
    """An httpx client with ``user`` signed in to the pages."""
    with httpx.Client(base_url=url, follow_redirects=False, timeout=60) as client:
        sign_in(client, user)
        yield client


@contextmanager
def inbox_and_api(tmp: Path) -> Iterator[tuple[TestClient, ApiContext]]:
    """The app ``grapharc serve --registry api_graphs:register --auth-file`` builds, over sessions in
    ``tmp``, run in this process (alice decides the gated waiter's approvals): a client sending
    alice's API token, and the API's context."""
    api = open_context(str(tmp / "sessions"), ["api_graphs:register"])
    auth = load_auth(write_auth_file(tmp / "auth.toml", alice_may_decide=f"{GATED_WAITER}/*"))
    with TestClient(create_app(sessions=str(tmp / "sessions"), auth=auth, api=api),
                    headers={"Authorization": f"Bearer {TOKEN}"}) as client:
        yield client, api


def pause_gated_thread(api: httpx.Client, release: Path) -> tuple[str, str]:
    """Through the API, a gated waiter's thread paused on the credit desk's approval (its node after
    the approval waits for ``release``): the thread and the approval."""
    thread = api.post("/threads", json={"metadata": {"graph_id": GATED_WAITER}}).json()["thread_id"]
    paused = api.post(f"/threads/{thread}/runs/wait",
                      json={"assistant_id": GATED_WAITER, "input": {"release_file": str(release)}})
    (asked,) = paused.json()["__interrupt__"]
    return thread, asked["id"]


def pending_events(lines: Iterator[str]) -> Iterator[dict]:
    """The data of each ``pending`` event of the inbox's SSE stream (``/inbox/events``), as it comes."""
    event = None
    for line in lines:
        if line.startswith("event:"):
            event = line.partition(":")[2].strip()
        elif line.startswith("data:") and event == "pending":
            yield json.loads(line.partition(":")[2])
