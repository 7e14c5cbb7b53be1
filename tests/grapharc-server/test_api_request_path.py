"""The run routes' request path: no work per request that the process could do once, and only the
route that serves it tried; counted, not timed (a test machine's clock is noise)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fastapi.dependencies.utils
import fastapi.routing
import pytest
from api_graphs import CHAT, ODD
from fastapi.testclient import TestClient
from langchain_core.messages import HumanMessage
from pydantic import TypeAdapter
from starlette.routing import Match

import grapharc.server.app
from grapharc.server.api.context import open_context
from grapharc.server.api.limits import may_be_refused, scan_json
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.runs import check_input
from grapharc.server.app import create_app
from grapharc.server.auth import load_auth, token_digest
from grapharc.server.route_index import RouteIndex


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


class RoutesTried:
    """Counts the API routes FastAPI (or the app's route index) tried to match requests to: installed
    before the app's first request, as the index takes the routes' matching as it is then."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tried = 0
        real_matches = fastapi.routing._EffectiveRouteContext.matches

        def counted(context: Any, scope: Any) -> Any:
            self.tried += 1
            return real_matches(context, scope)

        monkeypatch.setattr(fastapi.routing._EffectiveRouteContext, "matches", counted)

    def request(self, client: TestClient, method: str, path: str, body: dict[str, Any]) -> tuple[int, int]:
        """The status of the answer to ``method path`` (read to its end) and the routes tried for it."""
        self.tried = 0
        status = client.request(method, path, json=body).status_code
        return status, self.tried


def test_a_runs_requests_are_each_matched_against_the_one_route_that_serves_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    routes = RoutesTried(monkeypatch)
    with TestClient(create_app(api=ctx), base_url="http://localhost") as client:
        status, thread_tries = routes.request(client, "POST", "/threads", {"metadata": {"graph_id": CHAT}})
        assert status == 200
        thread = client.post("/threads", json={"metadata": {"graph_id": CHAT}}).json()["thread_id"]
        status, run_tries = routes.request(client, "POST", f"/threads/{thread}/runs/stream",
                                           {"assistant_id": CHAT, "input": {"question": "why?"},
                                            "stream_mode": ["updates"]})
        assert status == 200
    # FastAPI's scan tried 3 and 25 (each router before the one that serves the path every route,
    # that one its routes up to the match twice); the index tries the routes whose pattern matches
    assert (thread_tries, run_tries) == (1, 1)


def _sample_scopes(contexts: list[Any]) -> Iterator[dict[str, Any]]:
    """A request of each method to each route's path (its parameters filled in), and to that path
    with a segment more and with a trailing slash."""
    for context in contexts:
        path = re.sub(r"{[^}]*}", "x-1", context.path)
        for method in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"):
            for sent in (path, f"{path}/more", f"{path}/"):
                yield {"type": "http", "method": method, "path": sent, "root_path": "", "headers": []}


def _first_full_match(contexts: list[Any], scope: dict[str, Any]) -> Any:
    """The route FastAPI's scan serves ``scope`` with: the first in the app's order that fully
    matches it (None: the scan answers 404, 405 or a redirect)."""
    for context in contexts:
        if context.matches(dict(scope))[0] is Match.FULL:
            return context.original_route
    return None


def test_the_route_index_serves_a_request_with_the_route_the_scan_would_and_leaves_it_the_rest(
        tmp_path: Path) -> None:
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    app = create_app(api=ctx)
    index = app.router.routes[0]
    assert isinstance(index, RouteIndex)
    contexts = list(fastapi.routing.iter_route_contexts(app.router.routes[1:]))
    served = 0
    for scope in _sample_scopes(contexts):
        match, child_scope = index.matches(dict(scope))
        expected = _first_full_match(contexts, scope)
        if match is Match.FULL:
            assert child_scope["route"] is expected, scope
            served += 1
        else:
            assert not isinstance(expected, fastapi.routing.APIRoute), scope
    assert served >= len(contexts) - 4  # all but the documentation's own routes (not API routes)


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


def test_the_route_index_leaves_the_openapi_document_as_it_was(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    with TestClient(create_app(api=ctx), base_url="http://localhost") as client:
        indexed = client.get("/openapi.json").content
    monkeypatch.setattr(grapharc.server.app, "index_routes", lambda routes: None)
    ctx = open_context(str(tmp_path / "others"), ["api_graphs:register"])
    with TestClient(create_app(api=ctx), base_url="http://localhost") as client:
        assert client.get("/openapi.json").content == indexed  # paths in the same order, byte for byte


class DependenciesSolved:
    """Counts the dependency trees FastAPI solves (a route's own and each dependency's) per request."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.solved = 0
        real_solve = fastapi.dependencies.utils.solve_dependencies

        async def counted(**kwargs: Any) -> Any:
            self.solved += 1
            return await real_solve(**kwargs)

        monkeypatch.setattr(fastapi.dependencies.utils, "solve_dependencies", counted)  # its recursion
        monkeypatch.setattr(fastapi.routing, "solve_dependencies", counted)  # a route's own

    def request(self, client: TestClient, path: str, body: dict[str, Any]) -> int:
        """How many were solved for ``POST path`` (answered 200, read to its end)."""
        self.solved = 0
        assert client.post(path, json=body).status_code == 200
        return self.solved


def test_a_runs_routes_read_the_caller_and_the_context_from_the_request_not_as_dependencies(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    solved = DependenciesSolved(monkeypatch)
    with TestClient(create_app(api=ctx), base_url="http://localhost") as client:
        made = solved.request(client, "/threads", {"metadata": {"graph_id": ODD}})
        thread = client.post("/threads", json={"metadata": {"graph_id": ODD}}).json()["thread_id"]
        streamed = solved.request(client, f"/threads/{thread}/runs/stream",
                                  {"assistant_id": ODD, "input": {}, "stream_mode": ["updates"]})
    # the route's and the router-level caller's, and the thread guard's (with its caller) on the
    # stream: 4 and 6 when the context and the caller were the routes' own dependencies besides,
    # some 50 thousand instructions each though the caller was in the request's cache
    assert (made, streamed) == (2, 4)


def test_a_runs_routes_answer_401_first_without_a_token_and_know_the_caller_with_one(
        tmp_path: Path) -> None:
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    auth_file = tmp_path / "auth.toml"
    auth_file.write_text(f'[users.ops]\nroles = ["runner"]\n[roles.runner]\nrun = ["{ODD}"]\nread = "own"\n'
                         f'[tokens.ops]\nsha256 = "{token_digest("ops-token-0123456789")}"\nuser = "ops"\n')
    app = create_app(api=ctx, auth=load_auth(auth_file))
    with TestClient(app, base_url="http://localhost") as client:
        no_token = client.post("/threads", json={"metadata": "not an object"})
        stream_no_token = client.post("/threads/t-1/runs/stream", json={"input": "not a run"})
        signed = {"Authorization": "Bearer ops-token-0123456789"}
        made = client.post("/threads", json={"metadata": {"graph_id": ODD}}, headers=signed)
        thread = made.json()["thread_id"]
        with client.stream("POST", f"/threads/{thread}/runs/stream", headers=signed,
                           json={"assistant_id": ODD, "input": {}, "stream_mode": ["updates"]}) as stream:
            events = stream.read().decode()
        owner = ctx.manager.get(thread).owner
    assert (no_token.status_code, stream_no_token.status_code) == (401, 401)  # before the body's 422
    assert made.status_code == 200 and owner == "ops" and '"success"' in events
