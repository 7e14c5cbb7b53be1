"""The approval inbox in a real browser: Debian's chromium driven by Playwright (never a
downloaded browser). Sign in, see the pending approval, approve it, watch the thread finish;
a double click, or the same form submitted again from another tab, decides once; a user who
may not decide gets 403; a newly asked approval appears in an open inbox without a reload (the
page's script, under the pages' CSP). Every page (sign-in, inbox, approval, decided, thread) is
photographed at desktop and phone widths and checked with axe-core (the npm package, installed
into axe/node_modules by ``npm ci``, injected into the page): no serious or critical violation.

Screenshots go to the test's tmp dir for a person to look at, or to ``GRAPHARC_SCREENSHOTS`` when
set (``make inbox-screenshots`` writes docs/images/inbox/, which docs/concepts/inbox.md shows).
Without chromium, or without axe-core and npm to install it, the tests skip, except where CI requires them
(``GRAPHARC_REQUIRE_BROWSER``, ``GRAPHARC_REQUIRE_AXE``): there they fail."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from authz_setup import HERE, authz_server, client, paused_credit_thread
from authz_setup import PASSWORDS as AUTHZ_PASSWORDS
from inbox_setup import PASSWORDS, pause_credit_thread, reading, serve_inbox
from required import unavailable

CHROMIUM = Path("/usr/bin/chromium")
AXE = Path(__file__).with_name("axe")
AXE_SCRIPT = AXE / "node_modules" / "axe-core" / "axe.min.js"
INSTALL_SECONDS = 300  # bound on npm ci; no test measures time with it
RELOADS = 50
"""Bound on reloading the approval page while the thread carries on after the decision."""
WIDTHS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
BLOCKING = {"serious", "critical"}
"""The axe impacts a page may not have."""
APPEAR_MS = 60_000
"""Bound on waiting for a new approval to appear in an open inbox; no test measures time with it."""


@pytest.fixture(scope="module")
def chromium_path() -> Path:
    if not CHROMIUM.exists():
        unavailable("GRAPHARC_REQUIRE_BROWSER", "/usr/bin/chromium is missing",
                    "needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")
    return CHROMIUM


@pytest.fixture(scope="module")
def browser(chromium_path: Path):
    """One chromium for the module: each test works in browser contexts of its own (sign_in makes
    a fresh one), which share no cookies or storage, so a launch per test would buy nothing."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(chromium_path), headless=True,
                                              args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def axe_source() -> str:
    """axe-core's script, installed by ``npm ci`` into axe/node_modules where it is missing."""
    pinned = json.loads((AXE / "package.json").read_text())["dependencies"]["axe-core"]
    installed = AXE_SCRIPT.parent / "package.json"
    if not installed.exists() or json.loads(installed.read_text())["version"] != pinned:
        npm = shutil.which("npm")
        if npm is None:
            unavailable("GRAPHARC_REQUIRE_AXE", "npm is not on PATH to install axe-core",
                        "axe-core is not installed and npm is not on PATH")
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=AXE, capture_output=True, text=True,
                              timeout=INSTALL_SECONDS)
        if done.returncode != 0:
            unavailable("GRAPHARC_REQUIRE_AXE", f"npm ci in {AXE} failed: {done.stderr.strip()[-500:]}",
                        f"axe-core could not be installed: {done.stderr.strip()[-200:]}")
    return AXE_SCRIPT.read_text(encoding="utf-8")


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where the screenshots go: ``GRAPHARC_SCREENSHOTS`` if set, else the test's tmp dir."""
    folder = Path(os.environ.get("GRAPHARC_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def sign_in(browser, url: str, user: str, passwords: dict[str, str] = PASSWORDS, **context):
    """A page of a fresh browser context (made with ``context``), signed in as ``user`` through the
    sign-in form."""
    page = browser.new_context(**context).new_page()
    page.goto(f"{url}/inbox")
    assert "/inbox/signin" in page.url
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", passwords[user])
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
        assert "Rosalind Achterberg" in page.text_content("#evidence")
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


@pytest.fixture
def authz_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A ``grapharc serve`` with the API and authz_setup.py's people (alice decides the credit desk's)."""
    monkeypatch.setenv("PYTHONPATH", HERE)
    with authz_server(tmp_path) as url:
        yield url


def csp_errors(page) -> list[str]:
    """The page's console messages, collected from now on, that say the CSP refused something."""
    refused: list[str] = []
    page.on("console", lambda message: refused.append(message.text)
            if "Content Security Policy" in message.text else None)
    return refused


def test_a_new_approval_appears_in_an_open_inbox_without_a_reload(browser, authz_url):
    with client(authz_url, "alice") as api:
        first = paused_credit_thread(api)
        page = sign_in(browser, authz_url, "alice", AUTHZ_PASSWORDS)
        refused = csp_errors(page)
        page.reload()
        assert page.locator("tr.approval").count() == 1
        page.evaluate("window.notReloaded = true")
        second = paused_credit_thread(api)
        (asked,) = api.get(f"/threads/{second}/state").json()["interrupts"]
        page.wait_for_selector(f"tr[data-approval='{asked['id']}']", timeout=APPEAR_MS)
        assert page.evaluate("window.notReloaded") is True
        assert page.locator("tr.approval").count() == 2
        assert first != second and refused == []


def test_every_page_at_desktop_and_phone_widths_has_no_serious_accessibility_violation(
        browser, authz_url, axe_source, shots):
    with client(authz_url, "alice") as api:
        threads = [paused_credit_thread(api) for _ in range(3)]
        approvals = [api.get(f"/threads/{t}/state").json()["interrupts"][0]["id"] for t in threads]
    decider = sign_in(browser, authz_url, "alice", AUTHZ_PASSWORDS)
    decider.goto(f"{authz_url}/inbox/approvals/{approvals[0]}")
    decider.click("#approve")
    decider.wait_for_selector("#state")
    pages = {"signin": "/inbox/signin", "inbox": "/inbox", "approval": f"/inbox/approvals/{approvals[1]}",
             "decided": "/inbox/decided", "thread": f"/inbox/threads/{threads[0]}"}
    found: dict[str, list[dict]] = {}
    for width, viewport in WIDTHS.items():
        visitor = browser.new_context(viewport=viewport).new_page()
        signed = sign_in(browser, authz_url, "alice", AUTHZ_PASSWORDS, viewport=viewport)
        for name, path in pages.items():
            page = visitor if name == "signin" else signed
            refused = csp_errors(page)
            answer = page.goto(f"{authz_url}{path}")
            assert answer is not None and answer.status == 200, (name, answer and answer.status)
            page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)
            found[f"{name}-{width}"] = _axe(page, axe_source)
            assert refused == [], (name, refused)
    blocking = {shot: [(v["id"], v["impact"], v["help"], [n["target"] for n in v["nodes"]])
                       for v in violations if v["impact"] in BLOCKING] for shot, violations in found.items()}
    assert blocking == {shot: [] for shot in found}
    assert all((shots / f"{shot}.png").stat().st_size > 0 for shot in found)
    signed.evaluate("document.querySelector('main').append(document.createElement('input'))")
    assert ("label", "critical") in [(v["id"], v["impact"]) for v in _axe(signed, axe_source)]  # axe does see


def _axe(page, source: str) -> list[dict]:
    """axe-core's violations on ``page``: its script evaluated in the page (through the DevTools
    protocol, which the page's CSP does not govern), then run on the whole document."""
    page.evaluate(f"() => {{ {source}\n window.axe = axe; }}")
    return page.evaluate("async () => (await axe.run(document)).violations")
