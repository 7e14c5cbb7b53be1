"""One SessionManager per server process: the inbox's pages and the API's routes read through the
manager the app holds (the API's when it serves one, else one the app opens as it starts and
closes as it stops), never one opened per request. (A decision on a thread of a graph the server
does not serve opens one to carry it on: only that manager registers the thread's graph.)"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from api_graphs import GATED_WAITER
from fastapi.testclient import TestClient
from inbox_setup import (
    TOKEN,
    csrf_of,
    inbox_and_api,
    pause_credit_thread,
    pause_gated_thread,
    sign_in,
    write_auth_file,
)

from grapharc.server.app import create_app
from grapharc.server.auth import load_auth
from grapharc.session.manager import SessionManager

VIEWS = 3
"""How many times each page and route is read."""


@dataclass
class Managers:
    """The SessionManagers made and closed while counted."""

    opened: list[SessionManager] = field(default_factory=list)
    closed: list[SessionManager] = field(default_factory=list)


@pytest.fixture
def managers(monkeypatch: pytest.MonkeyPatch) -> Iterator[Managers]:
    """Count every SessionManager made and closed from here on, in any thread of this process."""
    counted = Managers()
    init, close = SessionManager.__init__, SessionManager.close

    def counted_init(self: SessionManager, *args: Any, **kwargs: Any) -> None:
        counted.opened.append(self)
        init(self, *args, **kwargs)

    def counted_close(self: SessionManager) -> None:
        counted.closed.append(self)
        close(self)

    monkeypatch.setattr(SessionManager, "__init__", counted_init)
    monkeypatch.setattr(SessionManager, "close", counted_close)
    yield counted


def _read_the_inbox(client: TestClient, approvals: list[str]) -> None:
    """Every page of the inbox, ``VIEWS`` times each."""
    for _ in range(VIEWS):
        assert client.get("/inbox").status_code == 200
        for approval in approvals:
            assert client.get(f"/inbox/approvals/{approval}").status_code == 200
        pending = client.get("/inbox/pending.json", headers={"Authorization": f"Bearer {TOKEN}"})
        assert {a["approval_id"] for a in pending.json()["approvals"]} >= set(approvals)


def test_an_inbox_only_server_opens_one_manager_as_it_starts_and_closes_it_as_it_stops(
        tmp_path: Path, managers: Managers) -> None:
    sessions = tmp_path / "sessions"
    asked = [pause_credit_thread(sessions, f"credit-{n}").approval_id for n in range(2)]
    auth = load_auth(write_auth_file(tmp_path / "auth.toml"))
    managers.opened.clear()
    managers.closed.clear()
    with TestClient(create_app(sessions=str(sessions), auth=auth)) as client:
        sign_in(client, "alice")
        _read_the_inbox(client, asked)
        assert len(managers.opened) == 1 and managers.closed == []
    assert managers.closed == managers.opened


def test_the_api_and_the_inbox_share_the_apis_manager(tmp_path: Path, managers: Managers) -> None:
    release = tmp_path / "release"
    release.touch()
    with inbox_and_api(tmp_path) as (client, api):
        threads, asked = zip(*(pause_gated_thread(client, release) for _ in range(2)), strict=True)
        sign_in(client, "alice")
        _read_the_inbox(client, list(asked))
        for _ in range(VIEWS):
            assert client.get(f"/threads/{threads[0]}/state").status_code == 200
            assert client.post("/threads/search", json={}).status_code == 200
        where = f"/inbox/approvals/{asked[0]}"
        decided = client.post(where, follow_redirects=False,
                              data={"decision": "approved", "csrf": csrf_of(client.get(where))})
        assert decided.status_code == 303, decided.text
        resumed = client.post(f"/threads/{threads[1]}/runs/wait",
                              json={"assistant_id": GATED_WAITER, "command": {"resume": "approved"}})
        assert resumed.json()["released"] is True
        (carrying,) = client.get(f"/threads/{threads[0]}/runs", params={"limit": 1}).json()
        assert client.get(f"/threads/{threads[0]}/runs/{carrying['run_id']}/join").json()["released"] is True
    assert managers.opened == [api.manager]
    assert managers.closed == [api.manager]
