"""The approval page as a place to decide on evidence, over HTTP against a real ``grapharc serve``: the
state the decision rests on (the fields the graph declares, formatted), the drawing of the path, the
audit trail as a timeline, times as people read them, and after a decision who decided and the thread.

The demo story the seeds tell: the credit desk is asked to release EUR 24,000 to Rosalind Achterberg
and sees the bureau score and the verified income the checks found."""

from __future__ import annotations

import html
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from inbox_setup import Served, csrf_of, pause_credit_thread, serve_inbox, sign_in, signed_in, write_auth_file
from pydantic import Field
from server_process import ServerProcess, grapharc_serve

from grapharc.examples.approval import GRAPH_NAME, build_credit_graph, outcome
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState
from grapharc.server.api.context import open_context
from grapharc.server.app import create_app
from grapharc.server.auth import load_auth
from grapharc.server.inbox import humane
from grapharc.session import Approvers, Gate, Shown

CREDIT_REGISTRY = "grapharc.examples.approval:register_credit_graph"
DEADLINE_SECONDS = 60.0
RECENTLY = r"(just now|a second ago|\d+ seconds ago|a minute ago)"
WHEN = r"\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC"


@contextmanager
def serve_credit_desk(tmp: Path) -> Iterator[Served]:
    """``grapharc serve`` registering the credit demo (so its declarations are known) with the inbox."""
    sessions = tmp / "sessions"
    sessions.mkdir(exist_ok=True)
    auth = write_auth_file(tmp / "auth.toml")
    with ServerProcess(grapharc_serve("--port", "0", "--json", "--auth-file", str(auth), "--sessions",
                                      str(sessions), "--registry", CREDIT_REGISTRY)) as server:
        yield Served(server.json_announcement()["url"], sessions, server)


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve_credit_desk(tmp_path_factory.mktemp("desk")) as running:
        yield running


def evidence_of(page: str) -> dict[str, str]:
    """The page's "what the decision rests on" list: label -> the value's text."""
    listed = re.search(r'<dl id="evidence">(.*?)</dl>\n', page, re.S)
    assert listed, page
    pairs = re.findall(r"<dt[^>]*>(.*?)</dt><dd[^>]*>(.*?)</dd>", listed.group(1), re.S)
    return {html.unescape(label): text_of(value) for label, value in pairs}


def text_of(fragment: str) -> str:
    """An HTML fragment's text, its whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def timeline_rows(page: str) -> list[list[str]]:
    """The timeline table's rows, each cell's text."""
    body = re.search(r'<table id="timeline">.*?<tbody>(.*?)</tbody>', page, re.S)
    assert body, page
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body.group(1), re.S)
    return [[text_of(cell) for cell in re.findall(r"<td>(.*?)</td>", row, re.S)] for row in rows]


def test_the_credit_desk_sees_the_bureau_score_and_the_verified_income_formatted(desk):
    asked = pause_credit_thread(desk.sessions, "story-1")
    with signed_in(desk.url, "alice") as client:
        page = client.get(f"/inbox/approvals/{asked.approval_id}").text
    shown = evidence_of(page)
    assert shown["Bureau score"] == "702"
    assert shown["Verified monthly income"] == "EUR 3,980.00"
    assert shown["Amount"] == "EUR 24,000.00"
    assert shown["Declared monthly income"] == "EUR 4,150.00"
    assert shown["Within policy"] == "yes"
    assert list(shown)[:3] == ["Applicant", "Amount", "Term (months)"]  # the declared order
    assert "Customer" not in shown  # written by the path, but not declared for the desk
    assert "The fields the graph declares its approvers see." in page


def test_the_question_is_asked_once_and_never_as_a_json_string(desk):
    asked = pause_credit_thread(desk.sessions, "once-1")
    with signed_in(desk.url, "alice") as client:
        page = client.get(f"/inbox/approvals/{asked.approval_id}").text
    assert html.unescape(page).count(asked.question) == 1
    assert "<pre" not in page and '"bureau_score"' not in page and "&#34;" not in page


def test_times_read_as_people_read_them(desk):
    asked = pause_credit_thread(desk.sessions, "times-1")
    with signed_in(desk.url, "alice") as client:
        page = client.get(f"/inbox/approvals/{asked.approval_id}").text
    expires = re.search(r'<dd id="expires">(.*?)</dd>', page).group(1)
    assert expires == f"expires in 7 days ({humane.date_time(asked.expires_at)})"
    asked_at = re.search(r'<dd id="asked">(.*?)</dd>', page).group(1)
    assert re.fullmatch(rf"{RECENTLY} \({WHEN}\)", asked_at)


def test_the_page_draws_the_path_with_the_paused_node_highlighted(desk):
    asked = pause_credit_thread(desk.sessions, "drawn-1")
    with signed_in(desk.url, "alice") as client:
        page = client.get(f"/inbox/approvals/{asked.approval_id}").text
    svg = re.search(r'<figure id="drawing" class="drawing">(<svg.*?</svg>)</figure>', page, re.S).group(1)
    assert 'role="img"' in svg
    assert '<title id="path-title">The path of thread drawn-1 through credit-approval</title>' in svg
    assert "Waiting at sign_off." in svg
    assert re.search(r'<g class="node paused">.*?>sign_off \(waiting\)</text>', svg)
    assert re.search(r'<g class="node passed">.*?>assess ×2</text>', svg)
    assert re.search(r'<g class="node other">.*?>disburse</text>', svg)  # a declared route not taken
    assert "<script" not in page


def test_the_timeline_lists_each_step_with_its_node_and_the_run_with_how_long_it_took(desk):
    asked = pause_credit_thread(desk.sessions, "timeline-1")
    with signed_in(desk.url, "alice") as client:
        page = client.get(f"/inbox/approvals/{asked.approval_id}").text
    rows = timeline_rows(page)
    steps = [(row[1], row[2]) for row in rows if row[1]]
    assert steps == [("1", "fetch_application"), ("2", "score"), ("3", "assess"), ("4", "fetch_income"),
                     ("5", "assess"), ("6", "check_threshold")]
    run = next(row for row in rows if row[3] == "run interrupted after 7 steps")
    assert re.fullmatch(r"[\d.]+ (ms|s)", run[4])
    assert any(row[3] == "asked for a decision at sign_off" for row in rows)
    assert all(re.fullmatch(r"\d{1,2} \w{3} \d{4}, \d\d:\d\d:\d\d UTC", row[0]) for row in rows)


def test_after_the_decision_the_page_says_who_decided_what_and_when_and_links_the_thread(desk):
    asked = pause_credit_thread(desk.sessions, "decided-1")
    with signed_in(desk.url, "alice") as client:
        form = client.get(f"/inbox/approvals/{asked.approval_id}")
        answer = client.post(f"/inbox/approvals/{asked.approval_id}",
                             data={"decision": "approved", "csrf": csrf_of(form)})
        assert answer.status_code == 303
        deadline = time.monotonic() + DEADLINE_SECONDS
        while time.monotonic() < deadline:  # the server's run worker carries the thread on
            after = client.get(answer.headers["location"]).text
            if '<strong id="thread-status">completed</strong>' in after:
                break
            time.sleep(0.05)
    said = re.search(r'<p class="done" id="state">(.*?)</p>', after, re.S).group(1)
    state = " ".join(html.unescape(re.sub(r"<[^>]+>", "", said)).split())
    assert re.match(rf"Approved by alice \(credit-desk\) {RECENTLY} \({WHEN}\)\.", state)
    assert state.endswith("The thread is completed (released). See the thread.")
    assert '<a id="thread-link" href="/inbox/threads/decided-1">See the thread</a>' in after
    assert 'id="evidence"' not in after and 'id="decide"' not in after
    rows = timeline_rows(after)
    assert any(row[3] == "approved by alice (credit-desk)" for row in rows)
    assert [row[2] for row in rows if row[1]][-2:] == ["sign_off", "disburse"]


def test_a_server_that_does_not_register_the_graph_shows_the_fields_the_path_wrote(tmp_path):
    with serve_inbox(tmp_path) as served:
        asked = pause_credit_thread(served.sessions, "plain-1")
        with signed_in(served.url, "alice") as client:
            page = client.get(f"/inbox/approvals/{asked.approval_id}").text
    shown = evidence_of(page)
    assert shown["Customer"] == "C-5521" and shown["Bureau score"] == "702"
    assert shown["Verified income"] == "398,000"  # no declaration known here: the value as it is
    assert "Application id" not in shown  # the input, which no node wrote
    assert "this server does not register the graph" in page
    assert re.search(r'<g class="node paused">.*?>sign_off \(waiting\)</text>', page)


def test_an_unknown_approval_is_still_a_404_page(desk):
    with signed_in(desk.url, "alice") as client:
        assert client.get("/inbox/approvals/ap-none").status_code == 404
    assert httpx.get(f"{desk.url}/inbox/approvals/ap-none", follow_redirects=False).status_code == 303


# -- a gate that declares dates and shares and picks the arguments it asks about -----------------

PAYOUT, HOSTILE = "payout", '<img src=x onerror="alert(1)">'
DUE_ON = datetime(2026, 12, 13, 9, 0, tzinfo=UTC).timestamp()


class PayoutState(GraphARCState):
    supplier: str = ""
    due_on: float = 0.0
    share: float = 0.0
    lines: list[dict[str, Any]] = Field(default_factory=list)
    paid: bool = False


def prepare(state: PayoutState) -> dict[str, Any]:
    return {"supplier": HOSTILE, "due_on": DUE_ON, "share": 0.16,
            "lines": [{"item": "steel", "qty": 12}, {"item": "bolts", "qty": 400}]}


def pay(state: PayoutState) -> dict[str, Any]:
    return {"paid": True}


def register_payout(manager: Any) -> None:
    """``prepare`` then ``pay <b>`` (a node name a person typed), held by a gate that shows the due
    date and the share and asks about the supplier and the lines."""
    graph = GraphARC(PayoutState, name=PAYOUT)
    graph.add_node("prepare", prepare, writes={"supplier", "due_on", "share", "lines"})
    graph.add_node("pay <b>", pay, writes={"paid"})
    graph.add_edge(START, "prepare").add_edge("prepare", "pay <b>").add_edge("pay <b>", END)
    shown = [Shown("due_on", "Due on", "date"), Shown("share", "Share of the budget", "percent"), "supplier"]
    manager.register(graph, gates={"pay <b>": Gate(
        "pay the supplier?", Approvers(frozenset({"credit-desk"}), shown_fields=shown),
        arguments=lambda values: {"supplier": values["supplier"], "lines": values["lines"]})})


@pytest.fixture
def payout(tmp_path: Path) -> Iterator[tuple[TestClient, str]]:
    """The inbox in this process over a payout thread held at its gate, alice signed in."""
    api = open_context(str(tmp_path / "sessions"), [], registrars=[register_payout])
    auth = load_auth(write_auth_file(tmp_path / "auth.toml", alice_may_decide=f"{PAYOUT}/*"))
    held = api.manager.start(PAYOUT, {}, thread_id="payout-1")
    (asked,) = held.holds
    with TestClient(create_app(sessions=str(tmp_path / "sessions"), auth=auth, api=api)) as client:
        sign_in(client, "alice")
        yield client, asked.approval_id


def test_a_gate_s_declared_dates_and_shares_are_formatted_and_its_arguments_shown_as_a_structure(payout):
    client, approval_id = payout
    page = client.get(f"/inbox/approvals/{approval_id}")
    assert page.status_code == 200
    shown = evidence_of(page.text)
    assert shown == {"Due on": "13 Dec 2026, 09:00 UTC", "Share of the budget": "16%", "Supplier": HOSTILE}
    asked = re.search(r'<div id="asked-about">(.*?)</div>', page.text, re.S).group(1)
    assert text_of(asked) == f"Supplier {HOSTILE} Lines Item steel Qty 12 Item bolts Qty 400"
    assert "<ul" in asked and "<dl" in asked and "{" not in asked


def test_user_input_is_escaped_everywhere_on_the_page(payout):
    client, approval_id = payout
    page = client.get(f"/inbox/approvals/{approval_id}").text
    assert HOSTILE not in page and "<b>" not in page
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in page
    assert re.search(r'<g class="node paused">.*?>pay &lt;b&gt; \(waiting\)</text>', page)


def test_a_graph_that_writes_its_trace_to_a_file_gives_each_node_its_duration(tmp_path):
    def register_traced_credit(manager: Any) -> None:
        graph = build_credit_graph()
        graph.trace = tmp_path / "credit.jsonl"
        desk = Approvers(frozenset({"credit-desk"}))  # no shown_fields: the path's fields are shown
        manager.register(graph, outcome=outcome, approvers={"sign_off": desk})

    api = open_context(str(tmp_path / "sessions"), [], registrars=[register_traced_credit])
    auth = load_auth(write_auth_file(tmp_path / "auth.toml"))
    (asked,) = api.manager.start(GRAPH_NAME, {"application_id": "LN-7310"}, thread_id="traced-1").holds
    with TestClient(create_app(sessions=str(tmp_path / "sessions"), auth=auth, api=api)) as client:
        sign_in(client, "alice")
        page = client.get(f"/inbox/approvals/{asked.approval_id}").text
    nodes = [row for row in timeline_rows(page) if row[1]]
    assert len(nodes) == 6 and all(re.fullmatch(r"[\d.]+ (ms|s)", row[4]) for row in nodes)
    assert "The fields the path so far wrote (the graph declares none for this node)." in page
