"""A decision on the inbox page answers at once; the server's run worker carries the thread on.

Against a real ``grapharc serve`` with registered graphs: the gated waiter's node after the
approval waits for a file the test writes, so the page's 303 arrives while the thread is still
running (before, the request drove the thread and answered only when it ended); the carrying
run is listed and joined like any run, and a second submit is still refused at once. The carrying
run has the config of the run that paused the thread (its configurable keys, context, tags and
recursion limit), as an API resume sending that config would."""

from __future__ import annotations

from pathlib import Path

import httpx
from config_graphs import CONFIGURED_ASK
from inbox_setup import TOKEN, csrf_of, pause_gated_thread, reading, signed_in

DECISION_SECONDS = 20
"""How long the test lets the decision take: far less than the thread, which waits for the test."""


def test_the_page_answers_before_the_thread_ends_and_the_worker_carries_it_on(api_server_gated: str,
                                                                              tmp_path: Path) -> None:
    release = tmp_path / "release"
    with httpx.Client(base_url=api_server_gated, timeout=60,
                      headers={"Authorization": f"Bearer {TOKEN}"}) as api:
        thread, asked = pause_gated_thread(api, release)
        with signed_in(api_server_gated, "alice") as person:
            where = f"/inbox/approvals/{asked}"
            token = csrf_of(person.get(where))
            answer = person.post(where, data={"decision": "approved", "csrf": token},
                                 timeout=DECISION_SECONDS)
            assert answer.status_code == 303, answer.text
            assert not release.exists()
            assert api.get(f"/threads/{thread}").json()["metadata"]["grapharc_status"] == "running"
            carrying = api.get(f"/threads/{thread}/runs", params={"limit": 1}).json()[0]
            assert carrying["status"] in ("pending", "running")
            again = person.post(where, data={"decision": "rejected", "csrf": token},
                                timeout=DECISION_SECONDS)
            assert again.status_code == 409 and "already approved by alice (credit-desk)" in again.text
        release.touch()
        values = api.get(f"/threads/{thread}/runs/{carrying['run_id']}/join").json()
        assert (values["answer"], values["released"]) == ("approved", True)
        assert api.get(f"/threads/{thread}/runs/{carrying['run_id']}").json()["status"] == "success"
        assert api.get(f"/threads/{thread}").json()["metadata"]["grapharc_status"] == "completed"
    with reading(tmp_path / "sessions") as manager:
        trail = manager.audit(thread)
    assert [e.detail["decision"] for e in trail if e.kind == "decided"] == ["approved"]
    assert [e.node for e in trail if e.kind == "node"] == ["ask_the_desk", "wait_for_release"]


def test_a_decision_on_the_page_carries_the_thread_on_with_the_paused_runs_own_config(
        api_server_configured: str) -> None:
    url = api_server_configured
    with httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}) as api:
        thread = api.post("/threads", json={"metadata": {"graph_id": CONFIGURED_ASK}}).json()["thread_id"]
        paused = api.post(f"/threads/{thread}/runs/wait", json={
            "assistant_id": CONFIGURED_ASK, "input": {}, "context": {"tone": "formal"},
            "config": {"configurable": {"user_id": "u-7", "model": "mock/careful"}, "tags": ["desk"],
                       "recursion_limit": 12}}).json()
        [asked] = paused["__interrupt__"]
        with signed_in(url, "alice") as person:
            where = f"/inbox/approvals/{asked['id']}"
            answer = person.post(where, data={"decision": "approved", "csrf": csrf_of(person.get(where))})
            assert answer.status_code == 303, answer.text
        carrying = api.get(f"/threads/{thread}/runs", params={"limit": 1}).json()[0]
        first, last = api.get(f"/threads/{thread}/runs/{carrying['run_id']}/join").json()["heard"]
    assert first.startswith("u-7|mock/careful|formal|desk|")
    assert last == first  # the node after the decision ran with the paused run's config, not the defaults
