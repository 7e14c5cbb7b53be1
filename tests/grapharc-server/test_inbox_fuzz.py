"""The approval inbox's pages, fed hostile forms, ids, cookies and tokens by a signed-in user and a
stranger, on a real server.

Whatever the request: never a 5xx and never a traceback, a refusal is a page or a problem document
(not a bare error), and the paused thread's approval stays open unless a request carried this
session's CSRF token and a real decision (the only way to decide it).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inbox_setup import TOKEN, csrf_of, pause_credit_thread, reading, serve_inbox, signed_in

HOSTILE = ["", " ", "x" * 5000, "\x00", "\u202eevil", "%00", "..", "//evil.example", "https://evil.example/",
           "/inbox/../threads", "approve ", "APPROVE", "é漢字", "-1", "1e999", "null"]
PAGES = [("GET", "/inbox"), ("GET", "/inbox/signin"), ("POST", "/inbox/signin"), ("POST", "/inbox/signout"),
         ("GET", "/inbox/approvals/{approval}"), ("POST", "/inbox/approvals/{approval}"),
         ("GET", "/inbox/pending.json")]
FORM_FIELDS = ["username", "password", "csrf", "next", "decision", "x"]
ANSWERS = ("text/html", "application/problem+json", "application/json")


def texts() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(HOSTILE), st.text(max_size=30))


@pytest.mark.timeout(600)
def test_any_form_to_any_page_is_answered_without_a_5xx_and_decides_only_with_the_token(
        tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    approval = pause_credit_thread(sessions, "fuzzed").approval_id
    with serve_inbox(tmp_path) as served, signed_in(served.url, "alice") as alice, \
            httpx.Client(base_url=served.url, timeout=60) as stranger:
        token = csrf_of(alice.get(f"/inbox/approvals/{approval}"))
        decisions: list[tuple[bool, str | None]] = []  # (carried the token, the decision) of each 303

        @settings(max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(page=st.sampled_from(PAGES), as_alice=st.booleans(), real_id=st.booleans(), hostile_id=texts(),
               form=st.dictionaries(st.sampled_from(FORM_FIELDS), texts(), max_size=5),
               real_token=st.booleans(), decision=st.sampled_from(["approve", "reject", None]),
               bearer=st.sampled_from([None, TOKEN, "wrong", "x" * 3000, "a.b.c"]), next_page=texts())
        def request(page: tuple[str, str], as_alice: bool, real_id: bool, hostile_id: str,
                    form: dict[str, str], real_token: bool, decision: str | None, bearer: str | None,
                    next_page: str) -> None:
            method, template = page
            client = alice if as_alice and template != "/inbox/signout" else stranger  # alice stays signed in
            path = template.replace("{approval}", approval if real_id else quote(hostile_id, safe=""))
            if real_token:
                form["csrf"] = token
            if decision is not None:
                form["decision"] = decision
            headers = {"authorization": f"Bearer {bearer}"} if bearer is not None else {}
            response = client.request(method, path, params={"next": next_page} if method == "GET" else None,
                                      data=form if method == "POST" else None, headers=headers)
            shown = f"{method} {path[:200]} {str(form)[:300]} alice={as_alice}: {response.status_code} " \
                    f"{response.text[:500]}"
            assert response.status_code < 500 and "Traceback" not in response.text, shown
            if response.status_code >= 400:
                assert response.headers["content-type"].startswith(ANSWERS), shown
            if response.status_code == 303:
                assert response.headers["location"].startswith("/inbox"), shown  # never a redirect elsewhere
            if response.headers.get("location", "").startswith("/inbox/approvals/") and method == "POST":
                decisions.append((form.get("csrf") == token, form.get("decision")))

        request()
        with reading(sessions) as manager:
            state = {each.approval_id: each.state for each in manager.approvals("fuzzed")}[approval]
        if decisions:
            assert decisions[0][0] and decisions[0][1] in ("approve", "reject"), decisions
            assert state == {"approve": "approved", "reject": "rejected"}[decisions[0][1]]
        else:
            assert state == "open"


@pytest.mark.parametrize("forged", ["é", "\x80", "漢字" * 20, "\u202e", "\x00"])
def test_a_form_token_with_non_ascii_characters_is_refused_not_an_error(forged: str) -> None:
    """Found by the fuzz above: ``hmac.compare_digest`` raises on a str holding non-ASCII text."""
    from grapharc.server.inbox.cookies import PageSession

    session = PageSession.new("alice")

    assert session.csrf_ok(forged) is False
    assert session.csrf_ok(session.csrf) is True
