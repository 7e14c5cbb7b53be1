"""The API's resume and the inbox's approve decide through one path: against a real ``grapharc
serve``, a user who may not decide is refused by both with the same status and the same message."""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from api_graphs import GATED_WAITER
from inbox_setup import TOKEN, csrf_of, pause_gated_thread, reading, signed_in, write_auth_file
from server_process import ServerProcess, grapharc_serve

from grapharc.server.auth import token_digest

BOB_TOKEN = "test-token-for-bob-0123456789"


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A server of api_graphs.py's graphs whose alice decides the gated waiter's approvals and whose
    bob (who decides another graph's) has an API token too."""
    auth = write_auth_file(tmp_path / "auth.toml", alice_may_decide=f"{GATED_WAITER}/*")
    bob = f'\n[tokens.bob]\nsha256 = "{token_digest(BOB_TOKEN)}"\nuser = "bob"\n'
    auth.write_text(auth.read_text() + bob)
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    command = grapharc_serve("--port", "0", "--json", "--sessions", str(tmp_path / "sessions"),
                             "--registry", "api_graphs:register", "--auth-file", str(auth))
    with ServerProcess(command) as served:
        yield served.json_announcement()["url"]


def _client(url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {token}"})


def test_the_api_and_the_inbox_refuse_a_user_who_may_not_decide_with_one_message(server: str,
                                                                                  tmp_path: Path) -> None:
    with _client(server, TOKEN) as api:
        thread, asked = pause_gated_thread(api, tmp_path / "release")
    with _client(server, BOB_TOKEN) as bob:
        refused = bob.post(f"/threads/{thread}/runs",
                           json={"assistant_id": GATED_WAITER, "command": {"resume": "approved"}})
    assert refused.status_code == 403
    message = refused.json()["detail"]
    assert message.startswith("bob may not decide") and asked in message
    with signed_in(server, "bob") as person:
        where = f"/inbox/approvals/{asked}"
        page = person.get(where)
        answer = person.post(where, data={"decision": "approved", "csrf": csrf_of(page)})
    assert (page.status_code, answer.status_code) == (403, 403)
    assert message in html.unescape(page.text) and message in html.unescape(answer.text)
    with reading(tmp_path / "sessions") as manager:
        assert manager.approval(asked).state == "open"
