"""The official ``langgraph-sdk`` client against a real ``grapharc serve``: thread, streamed run in
values/updates/events, an interrupt answered by a Command, join, and cancel."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from langgraph_sdk import get_client
from langgraph_sdk.schema import Command

CREDIT = "credit-approval"


async def _stream(client: Any, thread: str, **kwargs: Any) -> list[Any]:
    return [part async for part in client.runs.stream(thread, CREDIT, **kwargs)]


def test_the_sdk_streams_a_run_to_its_interrupt_and_resumes_it_with_a_command(api_server: str) -> None:
    async def story() -> None:
        client = get_client(url=api_server)
        thread = (await client.threads.create(graph_id=CREDIT))["thread_id"]
        parts = await _stream(client, thread, input={"application_id": "LN-7310"},
                              stream_mode=["values", "updates", "events"])
        kinds = {part.event for part in parts}
        assert {"metadata", "values", "updates", "events", "end"} <= kinds
        updates = [part.data for part in parts if part.event == "updates"]
        assert "check_threshold" in updates[-2]
        interrupt = updates[-1]["__interrupt__"][0]
        assert interrupt["value"].startswith("release EUR 24,000.00")
        assert any(p.data.get("name") == "fetch_income" for p in parts if p.event == "events")
        assert (await client.threads.get(thread))["status"] == "interrupted"
        state = await client.threads.get_state(thread)
        assert state["next"] == ["sign_off"] and state["interrupts"][0]["id"] == interrupt["id"]

        final = await client.runs.wait(
            thread, CREDIT, command=Command(resume={"decision": "approved", "decider": "credit-desk"}))
        assert final["released"] is True
        assert "answer: approved" in final["notes"]
        assert (await client.threads.get(thread))["status"] == "idle"
        history = await client.threads.get_history(thread, limit=3)
        assert history[0]["values"]["released"] is True

    asyncio.run(story())


def test_the_sdk_joins_a_background_run_and_cancels_another(api_server: str, tmp_path: Path) -> None:
    async def story() -> None:
        client = get_client(url=api_server)
        thread = (await client.threads.create(graph_id=CREDIT))["thread_id"]
        run = await client.runs.create(thread, CREDIT, input={"application_id": "LN-2204"})
        joined = await client.runs.join(thread, run["run_id"])
        assert joined["released"] is True
        assert (await client.runs.get(thread, run["run_id"]))["status"] == "success"
        rejoined = client.runs.join_stream(thread, run["run_id"], stream_mode="updates")
        replayed = [part async for part in rejoined]
        assert [p.event for p in replayed][-1] == "end"
        assert {"disburse": {"released": True, "notes": ["EUR 6,500.00 released to Tomás Ekwueme"]}} in [
            p.data for p in replayed if p.event == "updates"]

        waiting = (await client.threads.create(graph_id="waiter"))["thread_id"]
        release = tmp_path / "release"
        slow = await client.runs.create(waiting, "waiter", input={"release_file": str(release)})
        await client.runs.cancel(waiting, slow["run_id"], wait=True)
        assert (await client.runs.get(waiting, slow["run_id"]))["status"] == "interrupted"
        release.touch()

    asyncio.run(story())
