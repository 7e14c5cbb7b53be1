"""The inbox beside the pending list, against a real ``grapharc serve`` with the API and an auth file
(authz_setup.py's people): the pending list sorted by age or expiry, the decisions so far (newest
first, paged both ways, only on threads the user may read), a thread's page (404 for a thread the
user may not read, as for an unknown one), the live stream of pending approvals, and the pages'
Content-Security-Policy."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

import httpx
import pytest
from authz_setup import HERE, PASSWORDS, authz_server, client, paused_credit_thread
from inbox_setup import PASSWORDS as INBOX_PASSWORDS
from inbox_setup import csrf_of, pause_credit_thread, pause_gated_thread, pending_events, serve_inbox
from server_process import PATIENCE_SECONDS

from grapharc.server.inbox.routes import CSP

ROW = re.compile(r'<tr class="(?:approval|decision)" data-approval="([^"]+)"')
SVG = "{http://www.w3.org/2000/svg}"
AMOUNTS = re.compile(r'<td data-label="At stake" class="amounts">(.*?)</td>')
PAGE_LINK = re.compile(r'id="(newer|older)" rel="(?:prev|next)" href="([^"]+)"')


@pytest.fixture
def url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("PYTHONPATH", HERE)
    with authz_server(tmp_path) as running:
        yield running


def sign_in(browser: httpx.Client, user: str, passwords: dict[str, str] = PASSWORDS) -> httpx.Client:
    form = browser.get("/inbox/signin")
    answer = browser.post("/inbox/signin", data={"username": user, "password": passwords[user],
                                                 "csrf": csrf_of(form), "next": "/inbox"})
    assert answer.status_code == 303, answer.text
    return browser


def approval_of(api: httpx.Client, thread: str) -> str:
    (asked,) = api.get(f"/threads/{thread}/state").json()["interrupts"]
    return str(asked["id"])


def decide(browser: httpx.Client, approval: str, decision: str = "approved") -> None:
    page = browser.get(f"/inbox/approvals/{approval}")
    answer = browser.post(f"/inbox/approvals/{approval}", data={"decision": decision, "csrf": csrf_of(page)})
    assert answer.status_code == 303, answer.text


def rows(page: httpx.Response) -> list[str]:
    assert page.status_code == 200, page.text
    return ROW.findall(page.text)


def links(page: httpx.Response) -> dict[str, str]:
    return {name: href.replace("&amp;", "&") for name, href in PAGE_LINK.findall(page.text)}


def test_the_pending_list_sorts_by_when_asked_and_by_expiry(url, tmp_path):
    """The gated waiter's approval never expires and is asked first; the credit desk's expires in 7 days
    and lists the amounts its graph declares shown to the desk."""
    with client(url, "alice") as api, client(url) as alice:
        _, never = pause_gated_thread(api, tmp_path / "never-released")
        expiring = approval_of(api, paused_credit_thread(api))
        sign_in(alice, "alice")
        assert rows(alice.get("/inbox")) == rows(alice.get("/inbox?sort=age")) == [never, expiring]
        by_expiry = alice.get("/inbox?sort=expiry")
        assert rows(by_expiry) == [expiring, never]
        at_stake = dict(zip(rows(by_expiry), AMOUNTS.findall(by_expiry.text), strict=True))
        assert at_stake[expiring] == ("Amount: <strong>EUR 24,000.00</strong><br>"
                                      "Declared monthly income: <strong>EUR 4,150.00</strong><br>"
                                      "Verified monthly income: <strong>EUR 3,980.00</strong>")
        assert at_stake[never] == ""  # the gated waiter declares no money field
        assert "expires in 7 days (" in by_expiry.text and "never expires" in by_expiry.text
        assert 'id="sort-expiry" aria-current="true"' in by_expiry.text
        refused = alice.get("/inbox?sort=amount")
        assert refused.status_code == 422
        assert "sort must be one of age, expiry, not &#39;amount&#39;" in refused.text


def test_decisions_are_listed_newest_first_paged_and_only_on_threads_the_user_may_read(url):
    with client(url, "alice") as api, client(url, "dave") as dave_api, \
            client(url) as alice, client(url) as dave:
        sign_in(alice, "alice")
        sign_in(dave, "dave")
        mine = [approval_of(api, paused_credit_thread(api)) for _ in range(3)]
        theirs = approval_of(dave_api, paused_credit_thread(dave_api))
        for approval, decision in zip(mine, ("approved", "rejected", "approved"), strict=True):
            decide(alice, approval, decision)
        decide(dave, theirs)

        everything = alice.get("/inbox/decided")
        assert rows(everything) == mine[::-1]  # dave's thread is globex's: alice does not read it
        assert "rejected" in everything.text and "alice (credit-desk)" in everything.text
        assert links(everything) == {}
        assert rows(dave.get("/inbox/decided")) == [theirs]

        first = alice.get("/inbox/decided?size=2")
        assert rows(first) == [mine[2], mine[1]] and set(links(first)) == {"older"}
        second = alice.get(links(first)["older"])
        assert rows(second) == [mine[0]] and set(links(second)) == {"newer"}
        back = alice.get(links(second)["newer"])
        assert rows(back) == rows(first) and set(links(back)) == {"older"}

        for bad, says in (("size=0", "size must be a whole number from 1 to 200"),
                          ("before=yesterday", "before must be a decision&#39;s mark"),
                          ("after=1.5:x&before=1.5:y", "give before or after, not both")):
            refused = alice.get(f"/inbox/decided?{bad}")
            assert refused.status_code == 422 and says in refused.text, refused.text


def test_a_thread_page_shows_its_status_runs_and_trace_and_is_404_to_who_may_not_read_it(url):
    with client(url, "alice") as api, client(url) as alice, client(url) as dave:
        thread = paused_credit_thread(api)
        sign_in(alice, "alice")
        sign_in(dave, "dave")
        page = alice.get(f"/inbox/threads/{thread}")
        assert page.status_code == 200
        assert re.search(r'id="status">paused', page.text) and 'id="graph">credit-approval' in page.text
        (run,) = api.get(f"/threads/{thread}/runs").json()
        assert run["run_id"] in page.text and '<tr class="run">' in page.text
        assert f'href="/inbox/threads/{thread}/trace"' in page.text
        drawn = ElementTree.fromstring(re.search(r"<svg.*?</svg>", page.text, re.S).group(0))  # noqa: S314 -- our page
        assert drawn.get("role") == "img"
        marked = {g.get("class"): "".join(g.itertext()) for g in drawn.iter(f"{SVG}g")}
        assert marked["node paused"] == "sign_off (waiting)"
        assert "Waiting at sign_off" in "".join(drawn.find(f"{SVG}desc").itertext())
        assert "paused, waiting for a decision" in page.text and '<tr class="moment node">' in page.text
        trace = alice.get(f"/inbox/threads/{thread}/trace")  # the page session, no bearer token
        assert trace.headers["content-type"] == "application/x-ndjson"
        assert [json.loads(line)["kind"] for line in trace.text.splitlines()][-1] == "paused"
        assert trace.text == api.get(f"/threads/{thread}/trace").text
        hidden, unknown = dave.get(f"/inbox/threads/{thread}"), dave.get("/inbox/threads/no-such-thread")
        assert (hidden.status_code, unknown.status_code) == (404, 404)
        assert hidden.text == unknown.text.replace("no-such-thread", thread)
        assert dave.get(f"/inbox/threads/{thread}/trace").status_code == 404


def test_the_live_stream_sends_the_pending_approvals_and_again_when_one_is_asked(url):
    with client(url, "alice") as api, client(url) as alice:
        sign_in(alice, "alice")
        with alice.stream("GET", "/inbox/events", timeout=PATIENCE_SECONDS) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            events = pending_events(stream.iter_lines())
            assert next(events) == {"count": 0, "approvals": []}
            asked = approval_of(api, paused_credit_thread(api))
            assert next(events) == {"count": 1, "approvals": [asked]}
    with client(url) as stranger:
        assert stranger.get("/inbox/events").status_code == 303  # signed in only


def test_every_page_is_sent_with_a_strict_csp_and_nothing_inline(url):
    with client(url, "alice") as api, client(url) as alice:
        thread = paused_credit_thread(api)
        approval = approval_of(api, thread)
        pages = [alice.get("/inbox/signin")]
        sign_in(alice, "alice")
        pages += [alice.get(path) for path in ("/inbox", f"/inbox/approvals/{approval}", "/inbox/decided",
                                               f"/inbox/threads/{thread}", "/inbox/threads/unknown")]
        for page in pages:
            assert page.headers["content-security-policy"] == CSP, page.url
            assert "'unsafe-inline'" not in CSP and "script-src 'self'" in CSP
            assert not re.search(r"<script(?![^>]*\bsrc=)", page.text), page.url  # no inline script
            assert "<style" not in page.text and " style=" not in page.text, page.url
        script = alice.get("/inbox/static/live.js")
        assert script.status_code == 200 and "EventSource" in script.text


def test_a_thread_page_on_a_server_without_the_api_has_no_runs_and_still_its_trace(tmp_path):
    with serve_inbox(tmp_path) as served, httpx.Client(base_url=served.url, timeout=60) as alice:
        pause_credit_thread(served.sessions, "no-api")
        sign_in(alice, "alice", INBOX_PASSWORDS)
        page = alice.get("/inbox/threads/no-api")
        assert page.status_code == 200 and 'id="status">paused' in page.text
        assert "This server runs no graphs" in page.text and "<svg" in page.text
        assert 'href="/inbox/threads/no-api/trace"' in page.text
        trace = alice.get("/inbox/threads/no-api/trace")
        assert [json.loads(line)["kind"] for line in trace.text.splitlines()][-1] == "paused"
