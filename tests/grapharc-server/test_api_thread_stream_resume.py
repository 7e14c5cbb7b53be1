"""A thread's stream (``threads.join_stream``) rejoined with ``Last-Event-ID``, through the official
``langgraph-sdk`` on a real server: every event's id names its run, and a client that rejoins with
the last id it saw gets every later event once: the rest of that run, then each run after it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
from api_graphs import RELAY
from langgraph_sdk import get_client
from server_process import api_server_url

server = api_server_url("thread-stream")


async def _until_run_done(client: Any, thread: str, run_id: str, last_event_id: str | None) -> list[Any]:
    """The thread stream's parts (rejoined after ``last_event_id``) up to ``run_id``'s ``run_done``."""
    parts = []
    stream = await client.threads.join_stream(thread, last_event_id=last_event_id)
    async for part in stream:
        parts.append(part)
        if part.event == "run_done" and part.data["run_id"] == run_id:
            break
    await stream.aclose()
    return parts


def _seen(parts: list[Any]) -> list[tuple[str, str, Any]]:
    return [(p.id, p.event, p.data) for p in parts]


def test_a_threads_stream_rejoined_with_last_event_id_sends_every_later_event_once(
        server: str, tmp_path: Path) -> None:
    release = tmp_path / "release"

    async def story() -> None:
        client = get_client(url=server)
        thread = (await client.threads.create(graph_id=RELAY))["thread_id"]
        first = (await client.runs.create(thread, RELAY, input={"release_file": str(release)},
                                          stream_mode="updates"))["run_id"]
        before = []
        stream = await client.threads.join_stream(thread)
        async for part in stream:
            before.append(part)
            if part.event == "updates":
                break  # the client drops off after the first leg
        await stream.aclose()
        assert [(p.id, p.event) for p in before] == [(first, "metadata"), (before[1].id, "updates")]
        assert before[1].id.startswith(f"{first}:")
        release.touch()
        await client.runs.join(thread, first)
        second = (await client.runs.create(thread, RELAY, input={"release_file": str(release)},
                                           stream_mode="updates"))["run_id"]

        whole = await _until_run_done(client, thread, second, first)  # after the first run's metadata
        assert [p.event for p in whole] == ["updates"] * 3 + ["run_done", "metadata"] + ["updates"] * 3 + [
            "run_done"]
        assert [p.id for p in whole[4:]][:1] == [second] and whole[3].id == f"{first}:done"
        assert len({p.id for p in whole}) == len(whole)
        assert _seen(whole)[0] == _seen(before)[1]

        rest = await _until_run_done(client, thread, second, before[1].id)
        assert _seen(rest) == _seen(whole)[1:]  # nothing sent twice, nothing lost
        later = await _until_run_done(client, thread, second, f"{first}:done")
        assert _seen(later) == _seen(whole)[4:]
        assert _seen(await _until_run_done(client, thread, second, whole[-2].id)) == _seen(whole)[-1:]

        for never_sent in ("no-such-run:1-0", f"{first}:999999-0", f"{first}:x"):
            answer = httpx.get(f"{server}/threads/{thread}/stream", headers={"Last-Event-ID": never_sent})
            assert answer.status_code == 422, answer.text
            assert "is not an id" in answer.json()["detail"]

    asyncio.run(story())
