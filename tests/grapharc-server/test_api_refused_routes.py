"""LangGraph Platform routes the server does not serve answer with the reason and change nothing:
features it lacks (the store) are 501s; any other unknown route names the method and path it
was asked. An update_state the graph does not allow
(a field its node does not declare) is refused too, and changes nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from langgraph_sdk import get_client
from langgraph_sdk.errors import APIStatusError

from grapharc.server.api.refused import REFUSALS

RELAY = "relay"


def _relay_thread(client: httpx.Client) -> tuple[str, str]:
    """A relay thread run to its end, and its run's id."""
    thread = client.post("/threads", json={"metadata": {"graph_id": RELAY}}).json()["thread_id"]
    run = client.post(f"/threads/{thread}/runs/wait", json={"assistant_id": RELAY, "input": {}})
    assert run.status_code == 200, run.text
    return thread, client.get(f"/threads/{thread}/runs").json()[0]["run_id"]


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


def test_each_refused_route_says_why_and_changes_nothing(api_server: str) -> None:
    with httpx.Client(base_url=api_server, timeout=30) as client:
        thread, run = _relay_thread(client)
        threads_before = client.post("/threads/count", json={}).json()
        state_before = client.get(f"/threads/{thread}/state").json()
        for refusal in REFUSALS:  # one server for all of them: a server per route took 40 s
            path = (refusal.path.replace("{assistant_id}", RELAY).replace("{thread_id}", thread)
                    .replace("{run_id}", run).replace("{rest:path}", "/items"))
            for method in refusal.methods:
                answer = client.request(method, path, json={"metadata": {"x": 1}, "values": {"legs": []}})
                assert answer.status_code == refusal.status, (method, path, answer.text)
                assert answer.headers["content-type"] == "application/problem+json"
                assert (answer.json()["detail"], answer.json()["hint"]) == (refusal.detail, refusal.hint)
        assert client.post("/threads/count", json={}).json() == threads_before
        assert client.get(f"/threads/{thread}/state").json() == state_before
        assert client.get(f"/threads/{thread}/runs/{run}").status_code == 200
        assert client.get(f"/assistants/{RELAY}").status_code == 200


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
