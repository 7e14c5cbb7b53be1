"""The API's resume and the inbox's approve decide through one path: a decision made by each is
recorded by the same function and alike, and (against a real ``grapharc serve``) a user who may
read the thread but not decide is refused by both with the same status and the same message."""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_graphs import GATED_WAITER
from inbox_setup import (
    TOKEN,
    csrf_of,
    inbox_and_api,
    pause_gated_thread,
    reading,
    sign_in,
    signed_in,
    write_auth_file,
)
from server_process import ServerProcess, grapharc_serve

from grapharc.server.auth import token_digest
from grapharc.server.service import decisions

CAROL_TOKEN = "test-token-for-carol-0123456789"


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A server of api_graphs.py's graphs whose alice decides the gated waiter's approvals and whose
    carol (who reads every thread and decides nothing) has an API token too."""
    auth = write_auth_file(tmp_path / "auth.toml", alice_may_decide=f"{GATED_WAITER}/*")
    carol = f'\n[tokens.carol]\nsha256 = "{token_digest(CAROL_TOKEN)}"\nuser = "carol"\n'
    auth.write_text(auth.read_text() + carol)
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    command = grapharc_serve("--port", "0", "--json", "--sessions", str(tmp_path / "sessions"),
                             "--registry", "api_graphs:register", "--auth-file", str(auth))
    with ServerProcess(command) as served:
        yield served.json_announcement()["url"]


def _client(url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {token}"})


def test_the_api_and_the_inbox_record_a_decision_through_one_function(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process: the API's resume run and the inbox's approve both record with
    ``decisions.record``, and the audit trails they leave read alike."""
    recorded: list[tuple[str, str]] = []
    record = decisions.record

    def spied(manager: Any, thread_id: str, approval_id: str, decision: str, decider: str) -> Any:
        recorded.append((approval_id, decider))
        return record(manager, thread_id, approval_id, decision, decider)

    monkeypatch.setattr(decisions, "record", spied)
    release = tmp_path / "release"
    release.touch()  # the threads run to their end once decided
    with inbox_and_api(tmp_path) as (client, api):
        by_api, asked_api = pause_gated_thread(client, release)
        by_page, asked_page = pause_gated_thread(client, release)
        resumed = client.post(f"/threads/{by_api}/runs/wait",
                              json={"assistant_id": GATED_WAITER, "command": {"resume": "approved"}})
        assert resumed.status_code == 200 and resumed.json()["released"] is True
        sign_in(client, "alice")
        where = f"/inbox/approvals/{asked_page}"
        answer = client.post(where, follow_redirects=False,
                             data={"decision": "approved", "csrf": csrf_of(client.get(where))})
        assert answer.status_code == 303, answer.text
        (carrying,) = client.get(f"/threads/{by_page}/runs", params={"limit": 1}).json()
        assert client.get(f"/threads/{by_page}/runs/{carrying['run_id']}/join").json()["released"] is True
        trails = {thread: api.manager.audit(thread) for thread in (by_api, by_page)}
    assert recorded == [(asked_api, "alice (credit-desk)"), (asked_page, "alice (credit-desk)")]
    decided = {thread: [dict(e.detail) for e in trail if e.kind == "decided"]
               for thread, trail in trails.items()}
    assert decided[by_api] == [{"approval": asked_api, "decision": "approved", "by": "alice (credit-desk)",
                                "node": "ask_the_desk"}]
    assert decided[by_page] == [{**decided[by_api][0], "approval": asked_page}]
    after = {thread: [e.kind for e in trail[next(i for i, e in enumerate(trail) if e.kind == "decided"):]]
             for thread, trail in trails.items()}
    assert after[by_api] == after[by_page]


def test_the_api_and_the_inbox_refuse_a_user_who_may_not_decide_with_one_message(server: str,
                                                                                  tmp_path: Path) -> None:
    with _client(server, TOKEN) as api:
        thread, asked = pause_gated_thread(api, tmp_path / "release")
    with _client(server, CAROL_TOKEN) as carol:
        refused = carol.post(f"/threads/{thread}/runs",
                             json={"assistant_id": GATED_WAITER, "command": {"resume": "approved"}})
    assert refused.status_code == 403
    message = refused.json()["detail"]
    assert message.startswith("carol may not decide") and asked in message
    with signed_in(server, "carol") as person:
        where = f"/inbox/approvals/{asked}"
        page = person.get(where)
        answer = person.post(where, data={"decision": "approved", "csrf": csrf_of(page)})
    assert (page.status_code, answer.status_code) == (403, 403)
    assert message in html.unescape(page.text) and message in html.unescape(answer.text)
    with reading(tmp_path / "sessions") as manager:
        assert manager.approval(asked).state == "open"
