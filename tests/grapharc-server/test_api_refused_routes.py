"""Routes the server does not serve answer with the method and path asked and change nothing; an
update_state the graph does not allow (a field its node does not declare) is refused too, and
changes nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from langgraph_sdk import get_client
from langgraph_sdk.errors import APIStatusError
from server_process import api_server_url

api_server = api_server_url("refused-routes")
"""The module's one server: each test makes threads of its own and reads only those."""

RELAY = "relay"


def test_an_update_state_outside_the_nodes_declared_writes_is_refused_and_the_state_untouched(
        api_server: str) -> None:
    async def story() -> tuple[dict[str, Any], int, str, dict[str, Any]]:
        client = get_client(url=api_server)
        thread = (await client.threads.create(graph_id=RELAY))["thread_id"]
        await client.runs.wait(thread, RELAY, input={})
        before = await client.threads.get_state(thread)
        try:
            await client.threads.update_state(thread, {"release_file": "/forged"}, as_node="last_leg")
        except APIStatusError as refused:
            status, detail = refused.response.status_code, refused.response.json()["detail"]
        else:
            raise AssertionError("update_state was accepted")
        return before, status, detail, await client.threads.get_state(thread)

    before, status, detail, after = asyncio.run(story())
    assert status == 422 and "'release_file'" in detail and "last_leg" in detail
    assert after["values"] == before["values"] and after["checkpoint"] == before["checkpoint"]


def test_an_unknown_route_names_the_method_and_path_it_was_asked(api_server: str) -> None:
    with httpx.Client(base_url=api_server, timeout=30) as client:
        missing = client.get("/threads/t-1/somewhere")
        wrong_method = client.put("/threads")
    assert missing.status_code == 404
    assert missing.json()["detail"] == "this server has no route GET /threads/t-1/somewhere"
    assert "openapi.json" in missing.json()["hint"]
    assert wrong_method.status_code == 405 and wrong_method.headers["allow"] == "POST"
    assert wrong_method.json()["detail"] == "this server has no route PUT /threads; that path takes POST"


def test_refused_routes_still_need_a_token_where_the_api_does(api_server_with_auth: str) -> None:
    with httpx.Client(base_url=api_server_with_auth, timeout=30) as client:
        answer = client.post("/threads/t-1/state", json={"values": {}})
    assert answer.status_code == 401
