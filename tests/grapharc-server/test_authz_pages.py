"""With an auth file: the inbox shows a user only the approvals of threads they may read; the API's
description and the plugin inventory need a caller the file knows; signing out revokes the page
cookie on every process over the sessions; failed sign-ins are throttled per user name and per
address on every process. Two real ``grapharc serve`` processes
over one sessions directory and one auth file stand for the workers of one deployment."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest
from authz_setup import HERE, PASSWORDS, authz_server, client, paused_credit_thread
from inbox_setup import csrf_of

from grapharc.server.inbox.cookies import COOKIE

GUARDED = ("/openapi.json", "/docs", "/redoc", "/plugins")
LIMITS = "\n[sign_in]\nfailures_per_user = 3\nfailures_per_address = 5\nwindow_seconds = 600\n"


@contextmanager
def two_servers(tmp: Path) -> Iterator[tuple[str, str]]:
    """Two servers over the same sessions and auth file (sign-in limits: 3 a user, 5 an address)."""
    with pytest.MonkeyPatch.context() as patch, ExitStack() as stack:
        patch.setenv("PYTHONPATH", HERE)
        yield (stack.enter_context(authz_server(tmp, extra=LIMITS)),
               stack.enter_context(authz_server(tmp, extra=LIMITS)))


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """The module's two servers, for the tests that fail no sign-in (so none is throttled)."""
    with two_servers(tmp_path_factory.mktemp("pages")) as urls:
        yield urls


@pytest.fixture
def fresh_two(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """Two servers of the test's own, whose sign-in failures no other test shares."""
    with two_servers(tmp_path) as urls:
        yield urls


def _sign_in(browser: httpx.Client, user: str, password: str | None = None) -> httpx.Response:
    form = browser.get("/inbox/signin")
    return browser.post("/inbox/signin", data={"username": user, "password": password or PASSWORDS[user],
                                               "csrf": csrf_of(form), "next": "/inbox"})


def test_the_api_description_and_plugins_need_a_bearer_token_or_a_signed_in_page(two):
    url, _ = two
    with client(url) as anonymous, client(url, "dave") as dave, client(url, token="wrong") as wrong, \
            client(url) as browser:
        assert _sign_in(browser, "alice").status_code == 303
        for path in GUARDED:
            refused = anonymous.get(path)
            assert refused.status_code == 401, path
            assert refused.json()["detail"] == \
                "this needs a bearer token, or a page session someone signed in to"
            assert "send Authorization: Bearer" in wrong.get(path).json()["hint"]
            assert dave.get(path).status_code == 200, path
            assert browser.get(path).status_code == 200, path
        assert "/threads/search" in dave.get("/openapi.json").json()["paths"]
        assert anonymous.get("/healthz").status_code == 200  # a load balancer's probe needs nothing


def test_signing_out_revokes_the_cookie_on_every_process(two):
    first, second = two
    with client(first) as browser:
        assert _sign_in(browser, "alice").status_code == 303
        kept = browser.cookies[COOKIE]
        with client(second) as replay:
            replay.cookies.set(COOKIE, kept)
            assert replay.get("/inbox").status_code == 200  # the cookie is good on either process
            page = browser.get("/inbox")
            assert browser.post("/inbox/signout", data={"csrf": csrf_of(page)}).status_code == 303
            replay.cookies.set(COOKIE, kept)
            after = replay.get("/inbox")
            assert (after.status_code, after.headers["location"]) == (303, "/inbox/signin?next=/inbox")
            assert replay.get("/docs").json()["detail"] == "this page session was signed out; sign in again"
    with client(first) as again:
        assert _sign_in(again, "alice").status_code == 303 and again.get("/inbox").status_code == 200


def test_failed_sign_ins_are_throttled_per_user_and_per_address_across_processes(fresh_two):
    first, second = fresh_two
    with client(first) as one, client(second) as other:
        assert [_sign_in(one, "alice", "guess").status_code for _ in range(3)] == [401, 401, 401]
        locked = _sign_in(other, "alice")  # the right password, on the other process
        assert locked.status_code == 429
        assert 0 < int(locked.headers["retry-after"]) <= 600
        assert "too many failed sign-ins for this user name or from this address" in locked.text
        assert [_sign_in(other, "bob", "guess").status_code for _ in range(2)] == [401, 401]
        assert _sign_in(one, "bob").status_code == 429  # five failures from this address now


def test_the_inbox_shows_only_approvals_of_threads_the_user_may_read(two):
    """dave (globex) decides the credit desk's approvals as alice (acme) does, but not on her threads;
    bob reads acme's threads but decides nothing."""
    url, _ = two
    with client(url, "alice") as api:
        thread = paused_credit_thread(api)
        (asked,) = api.get(f"/threads/{thread}/state").json()["interrupts"]
    with client(url) as dave, client(url, "dave") as dave_api, client(url) as bob, client(url) as alice:
        for browser, user in ((dave, "dave"), (bob, "bob"), (alice, "alice")):
            assert _sign_in(browser, user).status_code == 303
        assert asked["value"] in alice.get("/inbox").text
        listed = dave.get("/inbox").text
        assert asked["value"] not in listed and "other approval" not in listed
        assert dave_api.get("/inbox/pending.json").json()["approvals"] == []
        hidden, unknown = dave.get(f"/inbox/approvals/{asked['id']}"), dave.get("/inbox/approvals/ap-none")
        assert (hidden.status_code, unknown.status_code) == (404, 404)
        assert hidden.text == unknown.text.replace("ap-none", asked["id"])
        posted = dave.post(f"/inbox/approvals/{asked['id']}",
                           data={"decision": "approved", "csrf": csrf_of(hidden)})
        assert posted.status_code == 404
        assert bob.get(f"/inbox/approvals/{asked['id']}").status_code == 403  # bob reads it, decides nothing
    with client(url, "alice") as api:
        assert api.get(f"/threads/{thread}").json()["status"] == "interrupted"
