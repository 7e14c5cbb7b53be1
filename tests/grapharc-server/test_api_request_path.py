"""The run routes' request path: no work per request that the process could do once, and few routes
tried before the one that serves it; counted, not timed (a test machine's clock is noise)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import fastapi.routing
import pytest
from api_graphs import CHAT
from fastapi.testclient import TestClient
from langchain_core.messages import HumanMessage
from pydantic import TypeAdapter

from grapharc.server.api.context import open_context
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
