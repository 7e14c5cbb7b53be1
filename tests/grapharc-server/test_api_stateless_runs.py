"""Stateless runs (``POST /runs``, ``/runs/wait``, ``/runs/stream``), driven by the official
``langgraph-sdk`` client as ``client.runs.*(None, ...)``: each makes a thread for its run and,
unless asked to keep it, deletes it once the run has ended and the grace period has passed; a
thread paused on an approval is kept; a refused request leaves no thread behind."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
from langgraph_sdk import get_client
from langgraph_sdk.schema import Command
from sdk_stories import CREDIT

GRACE = 0.5  # conftest's api_server_short_grace
PATIENCE = 30.0  # how long a test waits for a deletion before it fails (a bound, not a timing)


async def _exists(client: Any, thread_id: str) -> bool:
    try:
        await client.threads.get(thread_id)
    except httpx.HTTPStatusError as exc:
        assert exc.response.status_code == 404
        return False
    return True


async def _gone_in_time(client: Any, thread_id: str) -> bool:
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        if not await _exists(client, thread_id):
            return True
        await asyncio.sleep(0.1)
    return False


def test_a_stateless_run_waited_on_or_streamed_answers_then_its_thread_goes(
        api_server_short_grace: str) -> None:
    async def story() -> None:
        client = get_client(url=api_server_short_grace)
        final = await client.runs.wait(None, CREDIT, input={"application_id": "LN-2204"})
        assert final["released"] is True

        parts = [p async for p in client.runs.stream(None, CREDIT, input={"application_id": "LN-2204"},
                                                      stream_mode="updates")]
        assert parts[0].event == "metadata" and parts[-1].event == "end"
        assert {"disburse": {"released": True, "notes": ["EUR 6,500.00 released to Tomás Ekwueme"]}} in [
            p.data for p in parts if p.event == "updates"]
        thread_id = parts[0].data["thread_id"]
        assert await _gone_in_time(client, thread_id)

    asyncio.run(story())


def test_a_kept_thread_stays_and_a_paused_one_is_never_deleted(api_server_short_grace: str) -> None:
    async def story() -> None:
        client = get_client(url=api_server_short_grace)
        kept = await client.runs.create(None, CREDIT, input={"application_id": "LN-2204"},
                                        on_completion="keep")
        assert (await client.runs.join(kept["thread_id"], kept["run_id"]))["released"] is True
        deleted = await client.runs.create(None, CREDIT, input={"application_id": "LN-2204"})
        await client.runs.join(deleted["thread_id"], deleted["run_id"])
        assert await _gone_in_time(client, deleted["thread_id"])  # by then the kept one had its chance
        assert await _exists(client, kept["thread_id"])

        paused = await client.runs.create(None, CREDIT, input={"application_id": "LN-7310"})
        waiting = await client.runs.join(paused["thread_id"], paused["run_id"])
        assert waiting["__interrupt__"][0]["value"].startswith("release EUR 24,000.00")
        await asyncio.sleep(GRACE * 4)
        assert (await client.threads.get(paused["thread_id"]))["status"] == "interrupted"
        answer = Command(resume={"decision": "approved", "decider": "credit-desk"})
        final = await client.runs.wait(paused["thread_id"], CREDIT, command=answer)
        assert final["released"] is True

    asyncio.run(story())


REFUSED = [
    ({"assistant_id": CREDIT, "command": {"resume": "approved"}}, 422, "no approval to answer"),
    ({"assistant_id": CREDIT, "input": {"application": "LN-1"}}, 422, "not a field of the graph's state"),
    ({"assistant_id": CREDIT, "input": {}, "stream_mode": "telepathy"}, 422, "unknown stream mode"),
    ({"assistant_id": "nope", "input": {}}, 404, "'nope'"),
    ({"assistant_id": CREDIT, "input": {}, "on_completion": "archive"}, 422, "on_completion"),
]


def test_a_refused_stateless_run_names_the_problem_and_leaves_no_thread(api_server: str) -> None:
    with httpx.Client(base_url=api_server, timeout=60) as client:
        before = client.post("/threads/search", json={"limit": 1000}).json()
        for route in ("/runs", "/runs/wait", "/runs/stream"):
            for body, status, says in REFUSED:
                response = client.post(route, json=body)
                assert response.status_code == status, (route, body, response.text)
                assert response.headers["content-type"].startswith("application/problem+json")
                assert says in response.text, (route, body, response.text)
        assert client.post("/threads/search", json={"limit": 1000}).json() == before
