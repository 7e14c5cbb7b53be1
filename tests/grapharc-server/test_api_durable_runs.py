"""Runs are durable records in a queue: ``enqueue`` runs a second run of a thread after the first,
and a run id outlives the server process that created it (SQLite sessions; the PostgreSQL tests
add a second worker)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import httpx
import pytest
from server_process import ServerProcess, grapharc_serve

CREDIT = "credit-approval"


def test_an_enqueued_run_waits_for_the_threads_current_run_then_runs(api_server: str, tmp_path: Path) -> None:
    first_release, second_release = tmp_path / "first", tmp_path / "second"
    with httpx.Client(base_url=api_server, timeout=60) as client:
        thread = client.post("/threads", json={"metadata": {"graph_id": "waiter"}}).json()["thread_id"]
        first = client.post(f"/threads/{thread}/runs", json={
            "assistant_id": "waiter", "input": {"release_file": str(first_release)}}).json()
        second = client.post(f"/threads/{thread}/runs", json={
            "assistant_id": "waiter", "input": {"release_file": str(second_release)},
            "multitask_strategy": "enqueue"})
        assert second.status_code == 200, second.text
        second_id = second.json()["run_id"]
        assert second.json()["status"] == "pending"
        second_release.touch()  # the second run could finish at once, were it not queued behind the first
        assert client.get(f"/threads/{thread}/runs/{second_id}").json()["status"] == "pending"
        first_release.touch()
        joined = client.get(f"/threads/{thread}/runs/{second_id}/join")
        assert joined.status_code == 200 and joined.json()["released"] is True
        runs = [client.get(f"/threads/{thread}/runs/{rid}").json() for rid in (first["run_id"], second_id)]
        assert [r["status"] for r in runs] == ["success", "success"]
        trace = [json.loads(line) for line in client.get(f"/threads/{thread}/trace").text.splitlines()]
    turns = [t["kind"] for t in trace if t["kind"] in ("claimed", "completed")]
    assert turns == ["claimed", "completed", "claimed", "completed"]  # one after the other, never both


def _serve(sessions: Path) -> ServerProcess:
    return ServerProcess(grapharc_serve("--port", "0", "--json", "--sessions", str(sessions),
                                        "--registry", "api_graphs:register"))


def test_a_run_id_is_answered_after_the_server_restarts(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    sessions = tmp_path / "sessions"
    with _serve(sessions) as before:
        with httpx.Client(base_url=before.json_announcement()["url"], timeout=60) as client:
            thread = client.post("/threads", json={"metadata": {"graph_id": CREDIT}}).json()["thread_id"]
            run = client.post(f"/threads/{thread}/runs", json={
                "assistant_id": CREDIT, "input": {"application_id": "LN-2204"}}).json()["run_id"]
            assert client.get(f"/threads/{thread}/runs/{run}/join").json()["released"] is True
        before.send(signal.SIGTERM)
        assert before.wait() == 0
    with _serve(sessions) as after, httpx.Client(base_url=after.json_announcement()["url"],
                                                 timeout=60) as client:
        again = client.get(f"/threads/{thread}/runs/{run}")
        assert again.status_code == 200, again.text
        assert again.json()["status"] == "success"
        assert client.get(f"/threads/{thread}/runs/{run}/join").json()["released"] is True
        replay = client.get(f"/threads/{thread}/runs/{run}/stream", params={"stream_mode": "updates"}).text
        assert '"disburse"' in replay and "event: end" in replay
        missing = client.get(f"/threads/{thread}/runs/no-such-run")
        assert missing.status_code == 404 and "no-such-run" in missing.json()["detail"]
