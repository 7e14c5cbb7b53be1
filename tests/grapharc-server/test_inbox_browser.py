"""The approval inbox in a real browser: Debian's chromium driven by Playwright (never a
downloaded browser). Sign in, see the pending approval, approve it, watch the thread finish;
a double click, or the same form submitted again from another tab, decides once; a user who
may not decide gets 403. Screenshots of the inbox and the approval page are left in the
test's tmp dir for a person to look at."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from inbox_setup import PASSWORDS, pause_credit_thread, reading, serve_inbox

CHROMIUM = Path("/usr/bin/chromium")
REQUIRED = os.environ.get("GRAPHARC_REQUIRE_BROWSER", "") not in {"", "0"}
"""CI sets this: there the browser tests must run, so a missing chromium fails instead of skipping."""
if REQUIRED and not CHROMIUM.exists():
    raise RuntimeError("GRAPHARC_REQUIRE_BROWSER is set but /usr/bin/chromium is missing")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")
RELOADS = 50
"""Bound on reloading the approval page while the thread carries on after the decision."""


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                              args=["--no-sandbox"])
        yield launched
        launched.close()


def sign_in(browser, url: str, user: str):
    """A page of a fresh browser context, signed in as ``user`` through the sign-in form."""
    page = browser.new_context().new_page()
    page.goto(f"{url}/inbox")
    assert "/inbox/signin" in page.url
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", PASSWORDS[user])
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/inbox")
    assert page.text_content("#user") == user
    return page


def test_sign_in_approve_and_watch_the_thread_finish_and_a_second_submit_is_refused(browser, tmp_path):
    shots = tmp_path / "screenshots"
    with serve_inbox(tmp_path) as served:
        asked = pause_credit_thread(served.sessions, "browser-1")
        page = sign_in(browser, served.url, "alice")
        link = page.locator(f"a[href='/inbox/approvals/{asked.approval_id}']")
        assert link.text_content() == asked.question
        page.screenshot(path=str(shots / "inbox.png"), full_page=True)

        link.click()
        page.wait_for_url(f"{served.url}/inbox/approvals/{asked.approval_id}")
        assert page.text_content("#node").startswith("credit-approval / sign_off")
        assert page.text_content("#deciders") == "credit-desk"
        assert "Rosalind Achterberg" in page.text_content("#arguments")
        page.screenshot(path=str(shots / "approval.png"), full_page=True)

        other_tab = page.context.new_page()
        other_tab.goto(page.url)
        page.dblclick("#approve")
        page.wait_for_selector("#state")  # the decided page, whichever of the two submits it answers
        for _ in range(RELOADS):
            page.goto(f"{served.url}/inbox/approvals/{asked.approval_id}")
            if page.text_content("#thread-status") == "completed":
                break
            page.wait_for_timeout(100)
        assert page.text_content("#thread-status") == "completed"
        assert "Approved by alice (credit-desk)" in page.text_content("#state")
        page.screenshot(path=str(shots / "decided.png"), full_page=True)

        with reading(served.sessions) as manager:
            decided = [e.detail for e in manager.audit("browser-1") if e.kind == "decided"]
            assert manager.get("browser-1").outcome == "released"
        assert [d["by"] for d in decided] == ["alice (credit-desk)"]

        with other_tab.expect_navigation() as submitted:  # the same form, still open in another tab
            other_tab.click("#approve")
        assert submitted.value is not None and submitted.value.status == 409
        assert "already approved by alice (credit-desk) at" in other_tab.text_content("#refusal")
        other_tab.screenshot(path=str(shots / "already-decided.png"), full_page=True)
        with reading(served.sessions) as manager:
            assert len([e for e in manager.audit("browser-1") if e.kind == "decided"]) == 1
    assert all((shots / name).stat().st_size > 0 for name in ("inbox.png", "approval.png", "decided.png"))


def test_a_user_who_may_not_decide_gets_403_in_the_browser(browser, tmp_path):
    with serve_inbox(tmp_path) as served:
        asked = pause_credit_thread(served.sessions, "browser-2")
        page = sign_in(browser, served.url, "bob")
        assert page.locator("#empty").is_visible()
        answer = page.goto(f"{served.url}/inbox/approvals/{asked.approval_id}")
        assert answer is not None and answer.status == 403
        assert "bob may not decide this approval" in page.text_content("#refusal")
        assert page.locator("#approve").count() == 0
        page.screenshot(path=str(tmp_path / "screenshots" / "refused.png"), full_page=True)
        with reading(served.sessions) as manager:
            assert manager.approvals("browser-2")[0].state == "open"
