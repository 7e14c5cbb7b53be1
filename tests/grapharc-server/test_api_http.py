"""The threads API over HTTP against a real server: problem documents, validation, limits,
the busy-thread rule, cancel, the NDJSON trace, and SSE resumed with Last-Event-ID."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_graphs import registered_names
from server_process import api_server_url, sse_events

from grapharc.errors import GraphARCError
from grapharc.runs.errors import RunStoreError
from grapharc.server.api.problems import status_of
from grapharc.session.errors import SessionStoreError

api_server = api_server_url("http")
"""The module's one server: each test makes threads of its own and reads only those."""

CREDIT = "credit-approval"
PROBLEM = "application/problem+json"


def _client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=60)


def _thread(client: httpx.Client, graph: str = CREDIT) -> str:
    response = client.post("/threads", json={"metadata": {"graph_id": graph}})
    assert response.status_code == 200, response.text
    return str(response.json()["thread_id"])


def _problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    doc: dict[str, Any] = response.json()
    assert doc["status"] == status and doc["detail"]
    assert "Traceback" not in response.text
    return doc


def test_assistants_are_the_registered_graphs(api_server: str) -> None:
    with _client(api_server) as client:
        assert client.get(f"/assistants/{CREDIT}").json()["graph_id"] == CREDIT
        found = client.post("/assistants/search", json={"limit": 100}).json()
        assert sorted(a["assistant_id"] for a in found) == registered_names()
        missing = _problem(client.get("/assistants/nope"), 404)
        assert "nope" in missing["detail"] and missing["hint"]


def test_input_is_checked_against_the_graphs_state(api_server: str) -> None:
    with _client(api_server) as client:
        thread = _thread(client)
        bad = client.post(f"/threads/{thread}/runs/wait",
                          json={"assistant_id": CREDIT, "input": {"amount": "lots", "colour": "red"}})
        errors = _problem(bad, 422)["errors"]
        assert {tuple(e["loc"]) for e in errors} == {("input", "amount"), ("input", "colour")}
        assert client.get(f"/threads/{thread}").json()["metadata"]["grapharc_status"] == "created"


def test_a_request_cannot_describe_the_graph(api_server: str) -> None:
    with _client(api_server) as client:
        thread = _thread(client)
        sneaky = client.post(f"/threads/{thread}/runs",
                             json={"assistant_id": CREDIT, "input": {}, "graph": {"nodes": ["disburse"]}})
        errors = _problem(sneaky, 422)["errors"]
        assert errors[0]["loc"] == ["body", "graph"]
        assert _problem(sneaky, 422)["detail"].startswith("the request's body does not match")
        assert errors[0]["type"] == "extra_forbidden"
        wrong = client.post(f"/threads/{thread}/runs", json={"assistant_id": "waiter", "input": {}})
        assert "credit-approval" in _problem(wrong, 409)["detail"]


def test_body_size_and_depth_are_limited(api_server: str) -> None:
    with _client(api_server) as client:
        deep: Any = "leaf"
        for _ in range(40):
            deep = {"a": deep}
        assert "nests" in _problem(client.post("/threads", json={"metadata": deep}), 422)["detail"]
        huge = {"metadata": {"blob": "x" * 1_100_000}}
        _problem(client.post("/threads", json=huge), 413)
        binary = client.post("/threads", content=bytes(range(128, 256)) * 8,
                             headers={"content-type": "application/json"})
        assert "could not be read as JSON text (UTF-8)" in _problem(binary, 400)["detail"]
        long_number = client.post("/threads", content=b'{"metadata": {"n": ' + b"7" * 5_000 + b"}}",
                                  headers={"content-type": "application/json"})
        refused = _problem(long_number, 400)
        assert "a number too long to read (over 4300 digits)" in refused["detail"]
        assert "UTF-8" not in refused["detail"] + refused["hint"]
        _problem(client.get("/threads/no-such-thread"), 404)


def test_a_problem_quoting_a_huge_value_keeps_its_ends_and_says_what_it_left_out(api_server: str) -> None:
    with _client(api_server) as client:
        status = "s" * 50_000 + "-end"
        doc = _problem(client.post("/threads/search", json={"status": status}), 422)
        graph = _problem(client.get("/assistants/" + "g" * 9_000), 404)

    assert len(doc["detail"]) < 1_200 and doc["detail"].startswith("unknown thread status 'sss")
    whole = f"unknown thread status {status!r}"
    assert doc["detail"].endswith("-end'") and f"({len(whole) - 900:,} characters left out)" in doc["detail"]
    assert len(graph["detail"]) < 1_200 and "characters left out" in graph["detail"]


def test_a_busy_thread_refuses_a_second_run_queues_a_third_and_cancel_stops_them(api_server: str,
                                                                                   tmp_path: Path) -> None:
    release = tmp_path / "release"
    with _client(api_server) as client:
        thread = _thread(client, "waiter")
        body = {"assistant_id": "waiter", "input": {"release_file": str(release)}}
        first = client.post(f"/threads/{thread}/runs", json=body)
        assert first.status_code == 200, first.text
        run = first.json()["run_id"]
        second = client.post(f"/threads/{thread}/runs", json=body)
        assert "busy" in _problem(second, 409)["detail"]
        queued = client.post(f"/threads/{thread}/runs", json={**body, "multitask_strategy": "enqueue"})
        assert queued.status_code == 200 and queued.json()["status"] == "pending", queued.text
        dropped = client.post(f"/threads/{thread}/runs/{queued.json()['run_id']}/cancel")
        assert dropped.json()["status"] == "interrupted"  # a queued run is cancelled before it runs
        cancelled = client.post(f"/threads/{thread}/runs/{run}/cancel", params={"wait": "true"})
        assert cancelled.json()["status"] == "interrupted"
        assert client.get(f"/threads/{thread}/runs/{run}").json()["status"] == "interrupted"
        release.touch()  # lets the worker thread the cancelled node ran in finish


def test_sse_resumes_after_last_event_id_without_loss_or_duplicates(api_server: str) -> None:
    with _client(api_server) as client:
        thread = _thread(client)
        body = {"assistant_id": CREDIT, "input": {"application_id": "LN-2204"},
                "stream_mode": ["updates", "values"]}
        with client.stream("POST", f"/threads/{thread}/runs/stream", json=body) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            location = response.headers["location"]
            whole = sse_events(response.read().decode())
        assert whole[0]["event"] == "metadata" and whole[-1]["event"] == "end"
        numbered = [e for e in whole if "id" in e]
        assert {json.loads(e["data"]).get("disburse", {}).get("released") for e in numbered
                if e["event"] == "updates"} >= {True}
        cut = len(numbered) // 2
        rejoined = sse_events(client.get(location, headers={"Last-Event-ID": numbered[cut - 1]["id"]}).text)
        assert [e for e in rejoined if "id" in e] == numbered[cut:]
        only_updates = sse_events(client.get(location, params={"stream_mode": "updates"},
                                       headers={"Last-Event-ID": numbered[cut - 1]["id"]}).text)
        later_updates = [e for e in numbered[cut:] if e["event"] in ("updates", "end")]
        assert [e for e in only_updates if "id" in e] == later_updates
        trace = [json.loads(line) for line in client.get(f"/threads/{thread}/trace").text.splitlines()]
        assert [t["node"] for t in trace if t["kind"] == "node"][-1] == "disburse"
        assert {f"{t['seq']}-0" for t in trace if t["kind"] == "node"} <= {e["id"] for e in numbered}


def test_an_event_posted_to_a_thread_is_queued_durably(api_server: str) -> None:
    with _client(api_server) as client:
        thread = _thread(client)
        posted = client.post(f"/threads/{thread}/events", json={"kind": "note", "payload": {"text": "hi"}})
        assert posted.status_code == 200, posted.text
        trace = client.get(f"/threads/{thread}/trace").text.splitlines()
        assert json.loads(trace[-1])["kind"] == "event"
        _problem(client.post(f"/threads/{thread}/events", json={"kind": "note", "extra": 1}), 422)


def test_deleting_a_thread_removes_its_session_state_and_trace(api_server: str, tmp_path: Path) -> None:
    with _client(api_server) as client:
        thread = _thread(client)
        done = client.post(f"/threads/{thread}/runs/wait",
                           json={"assistant_id": CREDIT, "input": {"application_id": "LN-2204"}})
        assert done.json()["released"] is True
        assert client.delete(f"/threads/{thread}").status_code == 204
        _problem(client.get(f"/threads/{thread}"), 404)
        _problem(client.get(f"/threads/{thread}/trace"), 404)
        _problem(client.delete(f"/threads/{thread}"), 404)

        busy = _thread(client, "waiter")
        release = tmp_path / "release"
        run = client.post(f"/threads/{busy}/runs",
                          json={"assistant_id": "waiter", "input": {"release_file": str(release)}}).json()
        assert "in flight" in _problem(client.delete(f"/threads/{busy}"), 409)["detail"]
        release.touch()
        assert client.get(f"/threads/{busy}/runs/{run['run_id']}/join").json()["released"] is True
        assert client.delete(f"/threads/{busy}").status_code == 204


def _leave_stream_after_metadata(client: httpx.Client, thread: str, body: dict[str, Any]) -> str:
    """Start a streamed run, read its metadata event, hang up; the run's id."""
    with client.stream("POST", f"/threads/{thread}/runs/stream", json=body) as response:
        for line in response.iter_lines():
            if line.startswith("data: "):
                return str(json.loads(line[len("data: "):])["run_id"])
    raise AssertionError("the stream closed before its metadata event")


def test_a_hung_up_client_cancels_the_run_only_when_it_asked_to(api_server: str, tmp_path: Path) -> None:
    release = tmp_path / "release"
    with _client(api_server) as client:
        kept, dropped = _thread(client, "waiter"), _thread(client, "waiter")
        body = {"assistant_id": "waiter", "input": {"release_file": str(release)}}
        kept_run = _leave_stream_after_metadata(client, kept, body)
        dropped_run = _leave_stream_after_metadata(client, dropped, {**body, "on_disconnect": "cancel"})
        client.get(f"/threads/{dropped}/runs/{dropped_run}/join")
        assert client.get(f"/threads/{dropped}/runs/{dropped_run}").json()["status"] == "interrupted"
        release.touch()
        assert client.get(f"/threads/{kept}/runs/{kept_run}/join").json()["released"] is True
        assert client.get(f"/threads/{kept}/runs/{kept_run}").json()["status"] == "success"


def test_with_an_auth_file_the_api_needs_a_token_and_the_token_says_who_decides(
        api_server_with_auth: str) -> None:
    from inbox_setup import TOKEN

    with _client(api_server_with_auth) as anonymous:
        refused = anonymous.post("/threads", json={"metadata": {"graph_id": CREDIT}})
        _problem(refused, 401)
        assert refused.headers["www-authenticate"] == "Bearer"
    with httpx.Client(base_url=api_server_with_auth, timeout=60,
                      headers={"Authorization": f"Bearer {TOKEN}"}) as client:
        thread = _thread(client)
        paused = client.post(f"/threads/{thread}/runs/wait",
                             json={"assistant_id": CREDIT, "input": {"application_id": "LN-7310"}}).json()
        assert paused["__interrupt__"]
        named = {"assistant_id": CREDIT,
                 "command": {"resume": {"decision": "approved", "decider": "credit-desk"}}}
        assert "decider" in _problem(client.post(f"/threads/{thread}/runs/wait", json=named), 422)["detail"]
        done = client.post(f"/threads/{thread}/runs/wait",
                           json={"assistant_id": CREDIT, "command": {"resume": "approved"}})
        assert done.json()["released"] is True
        trace = [json.loads(line) for line in client.get(f"/threads/{thread}/trace").text.splitlines()]
        decided = next(t for t in trace if t["kind"] == "decided")
        assert "alice (credit-desk)" in json.dumps(decided["detail"])


def test_listing_runs_refuses_an_unknown_thread_bad_paging_and_unknown_fields(api_server: str) -> None:
    with _client(api_server) as client:
        thread = _thread(client)
        assert client.get(f"/threads/{thread}/runs").json() == []
        _problem(client.get("/threads/no-such-thread/runs"), 404)
        for params in ({"limit": "0"}, {"offset": "-1"}, {"limit": "x"}, {"status": "done"}):
            _problem(client.get(f"/threads/{thread}/runs", params=params), 422)
        paging = _problem(client.get(f"/threads/{thread}/runs", params={"limit": "x"}), 422)
        assert paging["detail"].startswith("the request's query does not match")  # not its body
        refused = _problem(client.get(f"/threads/{thread}/runs", params={"select": ["run_id", "nope"]}), 422)
        assert "nope" in refused["detail"]


def test_a_listed_run_has_exactly_the_fields_select_may_name() -> None:
    from grapharc.runs.records import RunRecord
    from grapharc.server.api import shapes

    record = RunRecord(run_id="r", thread_id="t", assistant_id="a", request={"kind": "start"},
                       created_at=1.0, updated_at=1.0)
    assert tuple(shapes.run(record)) == shapes.RUN_FIELDS


@pytest.mark.parametrize("failure", [RunStoreError("run store runs.db: database is locked"),
                                     SessionStoreError("session store sessions.db: disk I/O error")])
def test_a_store_that_failed_answers_503_not_a_client_error(failure: GraphARCError) -> None:
    assert status_of(failure) == 503


def test_the_409_for_a_paused_thread_shows_a_resume_this_server_takes(api_server: str) -> None:
    """Without an auth file the credit desk's approval needs a decider: a bare "approved" is a 403,
    so the hint must not offer it."""
    with _client(api_server) as client:
        thread = _thread(client)
        start = {"assistant_id": CREDIT, "input": {"application_id": "LN-7310"}}
        assert client.post(f"/threads/{thread}/runs/wait", json=start).json()["__interrupt__"]
        refused = _problem(client.post(f"/threads/{thread}/runs/wait", json=start), 409)
        shown = json.loads(refused["hint"].split("command is ", 1)[1].rsplit(" (", 1)[0])
        assert shown == {"resume": {"decision": "approved", "decider": "credit-desk"}}
        done = client.post(f"/threads/{thread}/runs/wait", json={"assistant_id": CREDIT, "command": shown})
        assert done.status_code == 200 and done.json()["released"] is True
