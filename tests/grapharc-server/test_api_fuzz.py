"""Every route of the threads API, fed hostile ids, bodies, query strings and headers, on a real server.

Whatever the request: the answer is never a 5xx, an error is a problem+json document naming what
was wrong (status and detail), no body holds a traceback, a stream ends cleanly, and a thread the
fuzz could not legitimately change (no request on it succeeded) keeps its state and trace. Routes
are read from the server's own OpenAPI document, so a new one is fuzzed without a change here.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

CREDIT = "credit-approval"
PROBLEM = "application/problem+json"
IDS = ["x", "..", "%00", "%ff%fe", "a" * 5000, "%E2%80%AE", "1e999", "-1", "%20", "%2F", "%C3%A9%E6%BC%A2"]
NUMBERS = [10**30, -(10**30), 2**63, -1, 0, 1e308, -1e308, 1.5, True, None]
EVENT_IDS = ["99999999999999999999999-1", "1" * 5000 + "-0", "5-99", "-1-0", "0-0", "zz", "", "1-",
             "9223372036854775807-2", "9223372036854775808-0"]
RAW_BODIES = [b"", b"{", b"\xff\xfe", b"1e999", b'{"a": NaN}', b'{"input": Infinity}',
              b"[" * 3000 + b"]" * 3000, b'{"metadata": {"\\ud800": 1}}', b'"just a string"', b"null"]
OPEN_ENDED = "/threads/{thread_id}/stream"
"""A thread's stream stays open for the thread's next run: of its answer the head is checked."""
READS = ("/history", "/cancel")
"""POST routes that change nothing on a finished run's thread: its history, cancelling a run that ended."""
CONTENT_TYPES = ["application/json", "text/plain", "application/x-www-form-urlencoded",
                 "multipart/form-data; boundary=x", "application/json; charset=latin-1"]
FIELDS = ["assistant_id", "input", "config", "metadata", "limit", "offset", "status", "stream_mode",
          "command", "multitask_strategy", "if_not_exists", "on_disconnect", "values", "checkpoint",
          "before", "thread_id", "graph_id", "kind", "payload", "event", "select", "sort_by", "budget",
          "after_seconds", "webhook", "interrupt_before", "on_completion", "as_node", "checkpoint_id"]


def json_values() -> st.SearchStrategy[Any]:
    leaves = st.one_of(st.sampled_from(NUMBERS), st.integers(),
                       st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20),
                       st.sampled_from([CREDIT, "waiter-not", "values", "updates"]))
    return st.recursive(leaves, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), inner,
                                                     max_size=4)), max_leaves=12)


def bodies() -> st.SearchStrategy[bytes]:
    documents = st.dictionaries(st.sampled_from(FIELDS), json_values(), max_size=5)
    return st.one_of(st.sampled_from(RAW_BODIES), documents.map(lambda d: json.dumps(d).encode()),
                     json_values().map(lambda d: json.dumps(d).encode()))


def queries() -> st.SearchStrategy[dict[str, str]]:
    names = st.sampled_from(["limit", "offset", "stream_mode", "wait", "cancel_on_disconnect", "after_seq",
                             "status", "x"])
    values = st.one_of(st.sampled_from(["1e999", "-5", "abc", str(10**30), "true", "maybe", "", "values"]),
                       st.text(st.characters(codec="ascii", exclude_categories=["Cc"]), max_size=10))
    return st.dictionaries(names, values, max_size=3)


def headers() -> st.SearchStrategy[dict[str, str]]:
    printable = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7e), max_size=30).map(str.strip)
    event_id = st.one_of(st.sampled_from(EVENT_IDS), st.from_regex(r"[0-9]{1,25}-[0-9]{1,3}", fullmatch=True))
    return st.fixed_dictionaries({}, optional={
        "last-event-id": event_id,
        "content-type": st.sampled_from(CONTENT_TYPES),
        "authorization": printable, "accept": printable})


def routes(client: httpx.Client) -> list[tuple[str, str]]:
    """(method, path template) of every operation the server documents, deletes last."""
    paths = client.get("/openapi.json").json()["paths"]
    return sorted(((method.upper(), path) for path, ops in paths.items() for method in ops),
                  key=lambda route: (route[0] == "DELETE", route))


def check(response: httpx.Response, shown: str) -> None:
    assert response.status_code < 500, shown
    assert "Traceback" not in response.text, shown
    if response.status_code >= 400:
        assert response.headers["content-type"].startswith(PROBLEM), shown
        problem = response.json()
        assert problem["status"] == response.status_code and problem["detail"], shown


@pytest.mark.timeout(600)
def test_any_request_to_any_route_is_answered_without_a_5xx_and_loses_nothing(api_server: str) -> None:
    with httpx.Client(base_url=api_server, timeout=60) as client:
        thread = client.post("/threads", json={"metadata": {"graph_id": CREDIT}}).json()["thread_id"]
        finished = client.post(f"/threads/{thread}/runs/wait",
                               json={"assistant_id": CREDIT, "input": {"application_id": "LN-2204"}})
        assert finished.status_code == 200, finished.text
        run = client.get(f"/threads/{thread}/runs").json()[0]["run_id"]
        before = [client.get(f"/threads/{thread}/state").text, client.get(f"/threads/{thread}/trace").text]
        succeeded_on_thread: list[str] = []
        operations = routes(client)
        assert len(operations) >= 20

        @settings(max_examples=400, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(route=st.sampled_from(operations), real_ids=st.booleans(), hostile=st.sampled_from(IDS),
               body=bodies(), query=queries(), header=headers())
        def request(route: tuple[str, str], real_ids: bool, hostile: str, body: bytes, query: dict[str, str],
                    header: dict[str, str]) -> None:
            method, template = route
            real = real_ids and method != "DELETE"  # deleting the real thread would end the check
            path = (template.replace("{thread_id}", thread if real else hostile)
                    .replace("{run_id}", run if real else hostile)
                    .replace("{assistant_id}", CREDIT if real else hostile))
            with client.stream(method, path, params=query, headers=header,
                               content=body if method == "POST" else None) as response:
                if template == OPEN_ENDED and response.status_code == 200:
                    assert response.headers["content-type"].startswith("text/event-stream")
                    return
                response.read()
            shown = (f"{method} {path[:200]} {query!r} {str(header)[:300]} {body[:300]!r}: "
                     f"{response.status_code} {response.text[:500]}")
            check(response, shown)
            if real and "{thread_id}" in template and method == "POST" and not template.endswith(READS) \
                    and response.status_code < 400:
                succeeded_on_thread.append(shown)

        request()
        assert client.get("/healthz").status_code == 200
        assert client.get(f"/threads/{thread}/state").status_code == 200
        assert all(json.loads(line) for line in client.get(f"/threads/{thread}/trace").text.splitlines())
        if not succeeded_on_thread:
            after = [client.get(f"/threads/{thread}/state").text, client.get(f"/threads/{thread}/trace").text]
            assert after == before
