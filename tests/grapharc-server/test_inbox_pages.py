"""The approval inbox over HTTP against a real ``grapharc serve``: sign-in, CSRF, 303 after a
decision, one decision per approval, 403 for a user who may not decide, expiry, API tokens."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from inbox_setup import (
    EXPIRED_DAYS,
    TOKEN,
    Served,
    csrf_of,
    pause_credit_thread,
    reading,
    serve_inbox,
    signed_in,
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve_inbox(tmp_path_factory.mktemp("inbox")) as running:
        yield running


def decided_entries(sessions: Path, thread: str) -> list[dict]:
    with reading(sessions) as manager:
        return [entry.detail for entry in manager.audit(thread) if entry.kind == "decided"]


def test_the_inbox_sends_a_stranger_to_sign_in(served):
    answer = httpx.get(f"{served.url}/inbox", follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/inbox/signin?next=/inbox"


def test_sign_in_needs_the_right_password_and_the_form_s_token(served):
    with httpx.Client(base_url=served.url) as client:
        form = client.get("/inbox/signin")
        cookie = form.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=lax" in cookie
        wrong = client.post("/inbox/signin", data={"username": "alice", "password": "guess",
                                                   "csrf": csrf_of(form)})
        assert wrong.status_code == 401 and "wrong user name or password" in wrong.text
        forged = client.post("/inbox/signin", data={"username": "alice", "password": "correct horse battery",
                                                    "csrf": "not-the-token"})
        assert forged.status_code == 403
        assert client.get("/inbox", follow_redirects=False).status_code == 303


def test_an_inbox_only_server_answers_problems_and_holds_bodies_to_the_limit(served):
    unknown = httpx.get(f"{served.url}/no-such-page")
    assert unknown.status_code == 404
    assert unknown.headers["content-type"] == "application/problem+json"
    assert unknown.json()["status"] == 404
    with httpx.Client(base_url=served.url) as client:
        form = client.get("/inbox/signin")
        flood = client.post("/inbox/signin", data={"username": "alice", "password": "x" * 2_000_000,
                                                   "csrf": csrf_of(form)})
        assert flood.status_code == 413 and "over 1000000 bytes" in flood.json()["detail"]
        assert client.get("/inbox", follow_redirects=False).status_code == 303  # not signed in


def test_a_forged_cookie_signs_nobody_in_and_an_unknown_approval_is_404(served):
    with signed_in(served.url, "alice") as client:
        assert client.get("/inbox/approvals/ap-nosuchthing").status_code == 404
        cookie = client.cookies["grapharc_session"]
        client.cookies.clear()
        client.cookies.set("grapharc_session", cookie[:-4] + ("BBBB" if cookie.endswith("AAAA") else "AAAA"))
        assert client.get("/inbox", follow_redirects=False).status_code == 303


def test_the_page_shows_what_it_takes_to_decide(served):
    asked = pause_credit_thread(served.sessions, "page-1")
    with signed_in(served.url, "alice") as client:
        inbox = client.get("/inbox")
        assert inbox.status_code == 200
        assert asked.question in inbox.text and f"/inbox/approvals/{asked.approval_id}" in inbox.text
        page = client.get(f"/inbox/approvals/{asked.approval_id}")
    assert page.status_code == 200
    for shown in ("release EUR 24,000.00 to Rosalind Achterberg", "credit-approval / sign_off",
                  "credit-desk", asked.approval_id, "alice (credit-desk)"):
        assert shown in page.text
    assert asked.expires_at is not None and str(int(asked.expires_at)) not in page.text  # ISO, not epoch


def test_a_decision_without_the_csrf_token_is_refused_and_nothing_is_decided(served):
    asked = pause_credit_thread(served.sessions, "csrf-1")
    with signed_in(served.url, "alice") as client:
        answer = client.post(f"/inbox/approvals/{asked.approval_id}", data={"decision": "approved"})
        forged = client.post(f"/inbox/approvals/{asked.approval_id}",
                             data={"decision": "approved", "csrf": "from-another-site"})
    assert (answer.status_code, forged.status_code) == (403, 403)
    assert "CSRF" in answer.text
    assert decided_entries(served.sessions, "csrf-1") == []


def test_approving_answers_303_and_the_thread_finishes_with_the_person_in_the_audit(served):
    asked = pause_credit_thread(served.sessions, "approve-1")
    with signed_in(served.url, "alice") as client:
        page = client.get(f"/inbox/approvals/{asked.approval_id}")
        answer = client.post(f"/inbox/approvals/{asked.approval_id}",
                             data={"decision": "approved", "csrf": csrf_of(page)})
        assert answer.status_code == 303
        assert answer.headers["location"] == f"/inbox/approvals/{asked.approval_id}"
        after = client.get(answer.headers["location"])
    assert "Approved by alice (credit-desk)" in after.text and "completed" in after.text
    assert 'id="evidence"' not in after.text  # decided: the state moved on, the page shows who decided
    assert 'href="/inbox/threads/approve-1"' in after.text
    with reading(served.sessions) as manager:
        session = manager.get("approve-1")
    assert (session.status, session.outcome) == ("completed", "released")
    assert decided_entries(served.sessions, "approve-1") == [
        {"approval": asked.approval_id, "decision": "approved", "by": "alice (credit-desk)",
         "node": "sign_off"}]


def test_a_second_submit_is_refused_with_who_decided_and_when(served):
    asked = pause_credit_thread(served.sessions, "twice-1")
    with signed_in(served.url, "alice") as client:
        where = f"/inbox/approvals/{asked.approval_id}"
        token = csrf_of(client.get(where))
        first = client.post(where, data={"decision": "rejected", "csrf": token})
        second = client.post(where, data={"decision": "approved", "csrf": token})
    assert first.status_code == 303
    assert second.status_code == 409
    with reading(served.sessions) as manager:
        decided_at = manager.approvals("twice-1")[0].decided_at
        assert manager.get("twice-1").outcome == "declined"
    from grapharc.session.records import iso

    assert f"already rejected by alice (credit-desk) at {iso(decided_at)}" in second.text
    assert len(decided_entries(served.sessions, "twice-1")) == 1


def test_a_reader_who_may_not_decide_gets_403_and_the_approval_stays_open(served):
    asked = pause_credit_thread(served.sessions, "carol-1")
    with signed_in(served.url, "carol") as client:
        listed = client.get("/inbox").text
        page = client.get(f"/inbox/approvals/{asked.approval_id}")
        answer = client.post(f"/inbox/approvals/{asked.approval_id}",
                             data={"decision": "approved", "csrf": csrf_of(page)})
    assert asked.question not in listed and "other approval(s) wait for someone else" in listed
    assert (page.status_code, answer.status_code) == (403, 403)
    assert "carol may not decide this approval" in answer.text
    with reading(served.sessions) as manager:
        assert manager.get("carol-1").status == "paused"
        assert manager.approvals("carol-1")[0].state == "open"


def test_a_user_who_may_not_decide_gets_403_and_the_approval_stays_open(served):
    """The CLI's thread has no owner: every user reads it, as before threads recorded owners."""
    asked = pause_credit_thread(served.sessions, "bob-1")
    with signed_in(served.url, "bob") as client:
        assert asked.question not in client.get("/inbox").text
        page = client.get(f"/inbox/approvals/{asked.approval_id}")
        answer = client.post(f"/inbox/approvals/{asked.approval_id}",
                             data={"decision": "approved", "csrf": csrf_of(page)})
    assert (page.status_code, answer.status_code) == (403, 403)
    assert "bob may not decide this approval" in answer.text
    with reading(served.sessions) as manager:
        assert manager.get("bob-1").status == "paused"
        assert manager.approvals("bob-1")[0].state == "open"


def test_an_expired_approval_says_so_and_cannot_be_decided(served):
    asked = pause_credit_thread(served.sessions, "late-1", asked_days_ago=EXPIRED_DAYS)
    with signed_in(served.url, "alice") as client:
        page = client.get(f"/inbox/approvals/{asked.approval_id}")
        assert "expired at" in page.text and 'id="approve"' not in page.text
        answer = client.post(f"/inbox/approvals/{asked.approval_id}",
                             data={"decision": "approved", "csrf": csrf_of(page)})
    assert answer.status_code == 410
    assert f"approval {asked.approval_id} on thread late-1 expired at" in answer.text
    with reading(served.sessions) as manager:
        assert manager.get("late-1").status == "expired"
    assert decided_entries(served.sessions, "late-1") == []


def test_the_api_lists_pending_approvals_for_a_bearer_token_only(served):
    asked = pause_credit_thread(served.sessions, "api-1")
    anonymous = httpx.get(f"{served.url}/inbox/pending.json")
    wrong = httpx.get(f"{served.url}/inbox/pending.json", headers={"Authorization": "Bearer nope"})
    listed = httpx.get(f"{served.url}/inbox/pending.json", headers={"Authorization": f"Bearer {TOKEN}"})
    assert (anonymous.status_code, wrong.status_code, listed.status_code) == (401, 401, 200)
    assert listed.json()["user"] == "alice"
    assert asked.approval_id in [a["approval_id"] for a in listed.json()["approvals"]]
