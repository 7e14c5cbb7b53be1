"""The run routes' request path: no work per request that the process could do once, and few routes
tried before the one that serves it; counted, not timed (a test machine's clock is noise)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import fastapi.routing
import pytest
from api_graphs import CHAT
from fastapi.testclient import TestClient
from langchain_core.messages import HumanMessage
from pydantic import TypeAdapter

from grapharc.server.api.context import open_context
from grapharc.server.api.limits import may_be_refused, scan_json
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.runs import check_input
from grapharc.server.app import create_app


def test_checking_run_input_builds_no_type_adapter_once_the_fields_were_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    built: list[Any] = []
    real_init = TypeAdapter.__init__

    def counted(self: TypeAdapter[Any], *args: Any, **kwargs: Any) -> None:
        built.append(args[0] if args else kwargs.get("type"))
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(TypeAdapter, "__init__", counted)
    try:
        check_input(ctx, CHAT, {"question": "why?", "messages": [HumanMessage("why?")]})
        built.clear()
        check_input(ctx, CHAT, {"question": "and now?", "messages": []})
        assert built == []  # a list of messages' adapter took 0.6 ms to build, per request
        with pytest.raises(ApiProblem) as refused:  # the checks are the same ones
            check_input(ctx, CHAT, {"question": 7, "messages": ["not a message"]})
        assert {str(e["loc"][1]) for e in refused.value.errors} == {"question", "messages"}
        assert built == []
    finally:
        asyncio.run(ctx.aclose())


def _routes_tried(client: TestClient, monkeypatch: pytest.MonkeyPatch, method: str, path: str,
                  body: dict[str, Any]) -> tuple[int, int]:
    """The status of the answer to ``method path`` (read to its end) and how many of the API's
    routes FastAPI tried to match the request to on the way."""
    tried = 0
    real_matches = fastapi.routing._EffectiveRouteContext.matches

    def counted(self: Any, scope: Any) -> Any:
        nonlocal tried
        tried += 1
        return real_matches(self, scope)

    with monkeypatch.context() as patched:
        patched.setattr(fastapi.routing._EffectiveRouteContext, "matches", counted)
        status = client.request(method, path, json=body).status_code
    return status, tried


def test_a_runs_requests_are_matched_against_few_routes_of_other_routers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    with TestClient(create_app(api=ctx), base_url="http://localhost") as client:
        status, thread_tries = _routes_tried(client, monkeypatch, "POST", "/threads",
                                             {"metadata": {"graph_id": CHAT}})
        assert status == 200
        thread = client.post("/threads", json={"metadata": {"graph_id": CHAT}}).json()["thread_id"]
        status, run_tries = _routes_tried(client, monkeypatch, "POST", f"/threads/{thread}/runs/stream",
                                          {"assistant_id": CHAT, "input": {"question": "why?"},
                                           "stream_mode": ["updates"]})
        assert status == 200
    # each router before the one that serves the path has every route tried, the one that serves it
    # its routes up to the match twice: 16 and 41 routes when the run routes came after the others
    assert thread_tries <= 3 and run_tries <= 25


@pytest.mark.parametrize(("path", "allowed"), [
    ("/threads/prune", "POST"),  # prune's, not threads' /threads/{thread_id}
    ("/threads/t-1/state", "GET"),  # threads', not state_writes' POST
    ("/threads/t-1/runs/crons", "POST"),  # crons', not runs' /threads/{thread_id}/runs/{run_id}
    ("/assistants/search", "GET"),  # assistants' /assistants/{assistant_id}, not assistant_writes'
])
def test_where_two_routers_paths_overlap_the_one_mounted_first_answers_a_method_neither_takes(
        tmp_path: Path, path: str, allowed: str) -> None:
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    with TestClient(create_app(api=ctx), base_url="http://localhost") as client:
        answer = client.put(path)
    assert answer.status_code == 405 and answer.headers["allow"] == allowed


def _body_parses(client: TestClient, monkeypatch: pytest.MonkeyPatch, path: str,
                 body: bytes) -> tuple[int, int]:
    """The status of ``POST path`` with ``body`` and how many times ``body`` was parsed as JSON."""
    parses = 0
    real_loads = json.loads

    def counted(text: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal parses
        parses += text == body
        return real_loads(text, *args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(json, "loads", counted)
        status = client.post(path, content=body, headers={"content-type": "application/json"}).status_code
    return status, parses


def test_a_plain_body_is_parsed_once_and_one_the_limits_may_refuse_before_the_route(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    with TestClient(create_app(api=ctx), base_url="http://localhost") as client:
        plain = json.dumps({"metadata": {"graph_id": CHAT}}).encode()
        assert _body_parses(client, monkeypatch, "/threads", plain) == (200, 1)  # was 2: limits, then route
        escaped = json.dumps({"metadata": {"graph_id": CHAT, "note": "caf\u00e9"}}).encode()
        assert _body_parses(client, monkeypatch, "/threads", escaped) == (200, 2)  # \u: the limits look
        surrogate = b'{"metadata": {"graph_id": "' + CHAT.encode() + b'", "note": "\\ud800"}}'
        assert _body_parses(client, monkeypatch, "/threads", surrogate) == (422, 1)  # unread by the route


@pytest.mark.parametrize("value", [
    {"metadata": {"graph_id": "chat"}}, [[[[1]]]], {"a": "caf\u00e9"}, {"a": "\ud800"}, {"\udfff": 1},
    {"a": "\ud83d\ude00"}, [{"a": [i]} for i in range(20)], "x\u0000y",
])
@pytest.mark.parametrize("encoding", ["ascii", "utf-8", "utf-16-le", "utf-32"])
@pytest.mark.parametrize("max_depth", [0, 1, 3, 32])
def test_a_body_left_to_the_route_is_never_one_the_limits_refuse(value: Any, encoding: str,
                                                                  max_depth: int) -> None:
    text = json.dumps(value, ensure_ascii=encoding == "ascii")
    try:
        body = text.encode(encoding, "surrogatepass")
    except UnicodeEncodeError:
        return
    if not may_be_refused(body, max_depth):
        depth, unencodable = scan_json(json.loads(body))
        assert depth <= max_depth and unencodable is None
