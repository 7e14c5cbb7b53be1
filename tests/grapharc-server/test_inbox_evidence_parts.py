"""The inbox's evidence parts on their own: times and values written for people (humane), the SVG
drawing of a thread's path (drawing) and its audit trail as a timeline (timeline), over a real credit
thread paused in SQLite with a real trace file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from xml.etree import ElementTree

import pytest

from grapharc.examples.approval import GRAPH_NAME, build_credit_graph, outcome
from grapharc.server.inbox import drawing, humane
from grapharc.server.inbox.timeline import timeline
from grapharc.session.approvals import Approvers
from grapharc.session.manager import SessionManager
from grapharc.session.records import AuditEntry

SVG = "{http://www.w3.org/2000/svg}"


def parsed(svg: str) -> ElementTree.Element:
    """The drawing as XML (which also checks it is well-formed)."""
    return ElementTree.fromstring(svg)  # noqa: S314 -- the tests' own drawings, not untrusted input
NOW = datetime(2026, 12, 7, 9, 0, tzinfo=UTC).timestamp()
DAY = 86_400.0


# -- humane ----------------------------------------------------------------------------------------

def test_an_expiry_reads_as_how_long_and_when():
    assert humane.expiry(NOW + 6 * DAY, NOW) == "expires in 6 days (13 Dec 2026, 09:00 UTC)"
    assert humane.expiry(NOW - 2 * 3600, NOW) == "expired 2 hours ago (7 Dec 2026, 07:00 UTC)"
    assert humane.expiry(None, NOW) == "never expires"
    assert humane.expiry(NOW + 7 * DAY - 2, NOW) == "expires in 7 days (14 Dec 2026, 08:59 UTC)"


def test_a_past_moment_reads_as_how_long_ago():
    assert humane.relative(NOW - 180, NOW) == "3 minutes ago"
    assert humane.relative(NOW, NOW) == "just now"
    assert humane.when(NOW - 180, NOW) == "3 minutes ago (7 Dec 2026, 08:57 UTC)"
    assert humane.date_time(1e300) == humane.NO_TIME
    assert humane.precise(NOW + 5.4) == "7 Dec 2026, 09:00:05 UTC"


@pytest.mark.parametrize(("milliseconds", "said"), [
    (0.043, "0.04 ms"), (850.2, "850 ms"), (1234.0, "1.2 s"), (185_300.0, "3 min 5 s"),
    (7_800_000.0, "2 h 10 min"), (None, ""),
])
def test_a_duration_reads_in_the_unit_that_fits(milliseconds, said):
    assert humane.duration(milliseconds) == said


def test_money_and_declared_formats_are_written_for_people():
    assert humane.money(24_000, "EUR") == "EUR 24,000.00"
    assert humane.formatted(398_000, "cents:EUR") == "EUR 3,980.00"
    assert humane.formatted(0.16, "percent") == "16%"
    assert humane.formatted(NOW, "date") == "7 Dec 2026, 09:00 UTC"
    assert humane.formatted("not a number", "cents:EUR") is None
    assert humane.cost_usd(0.00421) == "USD 0.0042" and humane.cost_usd(0.0) == ""
    assert humane.count(1234, "tokens") == "1,234 tokens" and humane.count(1, "tokens") == "1 token"


def test_a_value_is_shown_as_a_structure_with_its_text_escaped():
    value = {"applicant": "<b>Rosalind</b>", "checks": ["payroll", True], "score": 702}
    shown = str(humane.value_html(value))
    assert "<dt>Applicant</dt><dd>&lt;b&gt;Rosalind&lt;/b&gt;</dd>" in shown
    assert "<ul class=\"value\"><li>payroll</li><li>yes</li></ul>" in shown
    assert "<dd>702</dd>" in shown
    assert str(humane.value_html(datetime(2026, 12, 13, 9, 0, tzinfo=UTC))) == "13 Dec 2026, 09:00 UTC"
    assert "{" not in shown and '"' not in shown.replace('class="value"', "")


# -- drawing ---------------------------------------------------------------------------------------

@dataclass
class CreditThread:
    """The credit demo's LN-7310 paused on the credit desk's sign-off, with a trace."""

    manager: SessionManager
    thread: str
    trace: Path

    def events(self) -> list[dict]:
        return [json.loads(line) for line in self.trace.read_text().splitlines()]

    def audit(self) -> list[AuditEntry]:
        return self.manager.audit(self.thread)


@pytest.fixture
def credit(tmp_path: Path) -> Iterator[CreditThread]:
    manager = SessionManager(tmp_path / "sessions")
    graph = build_credit_graph()
    graph.trace = tmp_path / "trace.jsonl"
    manager.register(graph, outcome=outcome, approvers={"sign_off": Approvers(frozenset({"credit-desk"}))})
    session = manager.start(GRAPH_NAME, {"application_id": "LN-7310"}, thread_id="t-7310")
    assert session.status == "paused"
    try:
        yield CreditThread(manager, "t-7310", tmp_path / "trace.jsonl")
    finally:
        manager.close()


WALKED = {("__start__", "fetch_application"), ("fetch_application", "score"), ("score", "assess"),
          ("assess", "fetch_income"), ("fetch_income", "assess"), ("assess", "check_threshold"),
          ("check_threshold", "sign_off")}


def test_the_audit_trail_gives_the_path_the_thread_took(credit):
    path = drawing.path_from_audit(credit.audit(), drawing.declared_edges(build_credit_graph()), "sign_off")
    assert set(path.taken) == WALKED
    assert path.passed == {"fetch_application": 1, "score": 1, "assess": 2, "fetch_income": 1,
                           "check_threshold": 1}
    assert ("sign_off", "disburse") in path.edges and ("sign_off", "disburse") not in path.taken


def test_the_trace_gives_the_same_path_from_its_edges_and_routes(credit):
    path = drawing.path_from_trace(credit.events(), paused="sign_off")
    assert set(path.taken) == WALKED
    assert path.passed["assess"] == 2 and "sign_off" not in path.passed


def test_the_drawing_marks_the_path_and_highlights_the_paused_node(credit):
    path = drawing.path_from_audit(credit.audit(), drawing.declared_edges(build_credit_graph()), "sign_off")
    svg = parsed(drawing.draw_path(path, title="How LN-7310 got here"))
    assert svg.get("role") == "img" and svg.get("aria-labelledby") == "path-title path-desc"
    assert svg.find(f"{SVG}title").text == "How LN-7310 got here"
    assert "Waiting at sign_off" in svg.find(f"{SVG}desc").text
    kinds = {"".join(g.itertext()): g.get("class") for g in svg.iter(f"{SVG}g")}
    assert kinds["sign_off (waiting)"] == "node paused"
    assert kinds["assess ×2"] == "node passed"
    assert kinds["disburse"] == "node other"
    taken = [p for p in svg.iter(f"{SVG}path") if p.get("class") == "edge taken"]
    assert len(taken) == len(WALKED)


def test_node_names_are_escaped_in_the_drawing():
    hostile = '<script>alert("x")</script>&'
    path = drawing.RunPath((("__start__", hostile), (hostile, "__end__")), {hostile: 1},
                           {("__start__", hostile): 1}, None)
    svg = drawing.draw_path(path, title='a "title" <b>', id_prefix='p"x')
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    read = parsed(svg)
    assert read.find(f"{SVG}title").text == 'a "title" <b>'
    assert any(hostile in "".join(g.itertext()) for g in read.iter(f"{SVG}g"))


def test_an_edge_closing_a_cycle_goes_back_up_and_the_layers_go_down():
    path = drawing.RunPath((("__start__", "a"), ("a", "b"), ("b", "c"), ("c", "a"), ("c", "__end__")))
    svg = parsed(drawing.draw_path(path, title="loop"))
    tops = {"".join(g.itertext()): float(g.find(f"{SVG}rect").get("y")) for g in svg.iter(f"{SVG}g")}
    assert tops["START"] < tops["a"] < tops["b"] < tops["c"] < tops["END"]


# -- timeline --------------------------------------------------------------------------------------

def test_the_timeline_gives_each_node_its_step_duration_and_what_it_wrote(credit):
    moments = timeline(credit.audit(), credit.events())
    nodes = [m for m in moments if m.kind == "node"]
    assert [(m.node, m.step) for m in nodes] == [
        ("fetch_application", 1), ("score", 2), ("assess", 3), ("fetch_income", 4), ("assess", 5),
        ("check_threshold", 6)]
    assert all(m.duration_ms is not None and m.duration_ms > 0 for m in nodes)
    assert nodes[1].what == "wrote bureau_score, notes" and nodes[1].tokens == 0
    run = next(m for m in moments if m.kind == "run")
    assert run.what == "run interrupted after 7 steps" and run.duration_ms and run.duration_ms > 0
    asked = next(m for m in moments if m.kind == "asked")
    assert asked.what == "asked for a decision at sign_off"  # the question is the approval's, not repeated
    assert "claimed" not in {m.kind for m in moments}


def test_without_a_trace_the_timeline_still_has_the_nodes_and_the_decision(credit):
    (hold,) = credit.manager.get(credit.thread).holds
    credit.manager.approve(credit.thread, hold.approval_id, decider="alice (credit-desk)")
    moments = timeline(credit.audit())
    assert all(m.duration_ms is None for m in moments if m.kind == "node")
    decided = next(m for m in moments if m.kind == "decided")
    assert decided.what == "approved by alice (credit-desk)"
    assert [m.node for m in moments if m.kind == "node"][-2:] == ["sign_off", "disburse"]
    assert moments[-1].what == "completed"
    assert [m.what for m in moments if m.kind == "run"][-1] == "run completed after 2 steps"
