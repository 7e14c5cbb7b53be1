"""The approval inbox across workers: a credit thread paused through worker B's threads API is
decided on worker A's inbox pages (signed in, CSRF form post), finishes, and its audit trail
names the person who decided and shows each worker ran one turn."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import httpx

from grapharc.stores import open_store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grapharc-server"))

from inbox_setup import TOKEN, csrf_of, pending_events, signed_in, write_auth_file
from server_process import ServerProcess, grapharc_serve

REGISTRY = "grapharc.examples.approval:register_credit_graph"
CREDIT = "credit-approval"
LINK = re.compile(r'href="/inbox/approvals/([^"]+)"')


def worker(uri: str, auth: Path) -> ServerProcess:
    return ServerProcess(grapharc_serve("--port", "0", "--json", "--sessions", uri, "--registry", REGISTRY,
                                        "--auth-file", str(auth)))


def test_worker_a_s_inbox_decides_a_thread_paused_on_worker_b(tmp_path, postgres_uri):
    auth = write_auth_file(tmp_path / "auth.toml")
    with worker(postgres_uri, auth) as a, worker(postgres_uri, auth) as b:
        url_a, url_b = a.json_announcement()["url"], b.json_announcement()["url"]
        with httpx.Client(base_url=url_b, timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}) as api:
            thread = api.post("/threads", json={}).json()["thread_id"]
            paused = api.post(f"/threads/{thread}/runs/wait",
                              json={"assistant_id": CREDIT, "input": {"application_id": "LN-7310"}})
            assert paused.status_code == 200, paused.text
            assert api.get(f"/threads/{thread}").json()["status"] == "interrupted"

            with signed_in(url_a, "alice") as pages:
                (approval,) = LINK.findall(pages.get("/inbox").text)
                page = pages.get(f"/inbox/approvals/{approval}")
                answer = pages.post(f"/inbox/approvals/{approval}",
                                    data={"decision": "approved", "csrf": csrf_of(page)})
                assert answer.status_code == 303, answer.text
                assert "Approved by alice (credit-desk)" in pages.get(answer.headers["location"]).text

            carrying = api.get(f"/threads/{thread}/runs", params={"limit": 1}).json()[0]
            api.get(f"/threads/{thread}/runs/{carrying['run_id']}/join")  # A's worker carries it on
            final = api.get(f"/threads/{thread}").json()
            assert final["status"] == "idle" and final["metadata"]["grapharc_status"] == "completed"
    store = open_store(postgres_uri, kind="sessions")
    try:
        trail = store.audit(thread)
    finally:
        store.close()
    decided = [entry.detail for entry in trail if entry.kind == "decided"]
    assert decided == [{"approval": approval, "decision": "approved", "by": "alice (credit-desk)",
                        "node": "sign_off"}]
    runners = [entry.detail["runner"] for entry in trail if entry.kind == "claimed"]
    assert len(runners) == 2 and runners[0] != runners[1]  # B ran the first turn, A the decided one
    assert [entry.node for entry in trail if entry.kind == "node"].count("disburse") == 1


def test_worker_a_s_live_inbox_sends_an_approval_asked_on_worker_b(tmp_path, postgres_uri):
    """The inbox's SSE stream on A (woken by the store's LISTEN/NOTIFY) sends the approval a run on
    B asks for, then again once A's pages decided it (an empty list)."""
    auth = write_auth_file(tmp_path / "auth.toml")
    with worker(postgres_uri, auth) as a, worker(postgres_uri, auth) as b:
        url_a, url_b = a.json_announcement()["url"], b.json_announcement()["url"]
        with signed_in(url_a, "alice") as pages, pages.stream("GET", "/inbox/events") as stream, \
                httpx.Client(base_url=url_b, timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}) as api:
            sent = pending_events(stream.iter_lines())
            assert next(sent) == {"count": 0, "approvals": []}
            thread = api.post("/threads", json={}).json()["thread_id"]
            api.post(f"/threads/{thread}/runs/wait",
                     json={"assistant_id": CREDIT, "input": {"application_id": "LN-7310"}})
            asked = next(sent)
            assert asked["count"] == 1
            (approval,) = asked["approvals"]
            with signed_in(url_a, "alice") as deciding:
                page = deciding.get(f"/inbox/approvals/{approval}")
                decided = deciding.post(f"/inbox/approvals/{approval}",
                                        data={"decision": "approved", "csrf": csrf_of(page)})
                assert decided.status_code == 303, decided.text
            assert next(sent) == {"count": 0, "approvals": []}
