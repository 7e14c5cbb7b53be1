"""The live stream modes through the official ``langgraph-sdk`` client on one real server: tokens in
``messages-tuple`` and ``messages`` mode, a node's custom writes, ``debug``/``tasks``/``checkpoints``
in LangGraph's shapes, subgraphs' events named ``mode|ns``, ``events``' chat-model events, a
reconnect in the middle of a token stream, and the run's live log deleted with its thread."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_graphs import CHAT, CHAT_ANSWER, DELEGATING_CHAT, SECOND_ANSWER
from langgraph_sdk import get_client
from server_process import serving


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """One real ``grapharc serve`` for the module: its URL and its sessions directory."""
    sessions = tmp_path_factory.mktemp("live") / "sessions"
    with serving(sessions, "--registry", "api_graphs:register") as server:
        yield server.json_announcement()["url"], sessions


def stream(url: str, graph: str, modes: list[str], question: str = "hi", **options: Any) -> list[Any]:
    """Every part of a run of ``graph`` streamed in ``modes`` through the SDK, on a new thread."""
    async def parts() -> list[Any]:
        client = get_client(url=url)
        thread = (await client.threads.create(graph_id=graph))["thread_id"]
        return [part async for part in client.runs.stream(thread, graph, input={"question": question},
                                                           stream_mode=modes, **options)]  # type: ignore[arg-type]

    return asyncio.run(parts())


def named(parts: list[Any], event: str) -> list[Any]:
    return [part.data for part in parts if part.event == event]


def test_tokens_arrive_in_messages_tuple_mode_as_chunks_in_order_joining_into_the_final_message(
        live_server: tuple[str, Path]) -> None:
    parts = stream(live_server[0], CHAT, ["messages-tuple", "values"])
    tokens = named(parts, "messages")
    assert len(tokens) >= 10
    assert all(chunk["type"] == "AIMessageChunk" and meta["langgraph_node"] == "chat"
               for chunk, meta in tokens)
    assert len({chunk["id"] for chunk, _meta in tokens}) == 1
    final = named(parts, "values")[-1]
    assert "".join(chunk["content"] for chunk, _meta in tokens) == CHAT_ANSWER == final["answer"]
    assert final["messages"][-1]["content"] == CHAT_ANSWER
    kinds = [part.event for part in parts]
    assert len(kinds) - 1 - kinds[::-1].index("messages") < len(kinds) - 1 - kinds[::-1].index("values")


def test_messages_mode_sends_metadata_then_growing_partials_then_the_complete_message(
        live_server: tuple[str, Path]) -> None:
    parts = [part for part in stream(live_server[0], CHAT, ["messages"]) if part.event.startswith("messages")]
    assert parts[0].event == "messages/metadata"
    (message_id, about), = parts[0].data.items()
    assert about["metadata"]["langgraph_node"] == "chat"
    partials = [part.data[0]["content"] for part in parts if part.event == "messages/partial"]
    assert len(partials) >= 10 and partials[-1] == CHAT_ANSWER
    assert all(later.startswith(earlier) for earlier, later in pairwise(partials))
    assert parts[-1].event == "messages/complete"
    complete = parts[-1].data[0]
    assert (complete["type"], complete["id"], complete["content"]) == ("ai", message_id, CHAT_ANSWER)
    assert complete["usage_metadata"]["output_tokens"] > 0


def test_a_nodes_stream_writer_events_arrive_in_custom_mode(live_server: tuple[str, Path]) -> None:
    parts = stream(live_server[0], CHAT, ["custom"], question="why?")
    assert named(parts, "custom") == [{"step": "asking", "question": "why?"}, {"step": "answered"}]


def test_debug_tasks_and_checkpoints_have_langgraphs_shapes(live_server: tuple[str, Path]) -> None:
    parts = stream(live_server[0], CHAT, ["debug", "tasks", "checkpoints"])
    checkpoints = named(parts, "checkpoints")
    assert checkpoints and all(set(c) == {"config", "metadata", "values", "next", "parent_config", "tasks"}
                               for c in checkpoints)
    assert checkpoints[-1]["values"]["answer"] == CHAT_ANSWER and checkpoints[-1]["next"] == []
    started, finished = named(parts, "tasks")
    assert {"id", "name", "input", "triggers"} <= set(started) and started["name"] == "chat"
    assert {"id", "name", "error", "interrupts", "result"} <= set(finished)
    assert (finished["id"], finished["error"]) == (started["id"], None)
    assert finished["result"]["answer"] == CHAT_ANSWER
    debug = named(parts, "debug")
    assert {event["type"] for event in debug} == {"checkpoint", "task", "task_result"}
    assert all({"step", "timestamp", "type", "payload"} <= set(event) for event in debug)


def test_events_mode_carries_the_chat_models_start_tokens_and_end_beside_the_nodes(
        live_server: tuple[str, Path]) -> None:
    events = named(stream(live_server[0], CHAT, ["events"]), "events")
    model = [event for event in events if event["event"].startswith("on_chat_model")]
    assert model[0]["event"] == "on_chat_model_start" and model[-1]["event"] == "on_chat_model_end"
    streamed = [event["data"]["chunk"]["content"] for event in model
                if event["event"] == "on_chat_model_stream"]
    assert "".join(streamed) == CHAT_ANSWER == model[-1]["data"]["output"]["content"]
    assert len({event["run_id"] for event in model}) == 1 and model[0]["metadata"]["langgraph_node"] == "chat"
    assert any(event["event"] == "on_chain_end" and event["name"] == "chat" for event in events)


def test_subgraph_events_are_named_mode_and_namespace_only_when_asked_for(
        live_server: tuple[str, Path]) -> None:
    parts = stream(live_server[0], DELEGATING_CHAT, ["messages-tuple", "updates"], stream_subgraphs=True)
    inner = [part for part in parts if "|" in part.event]
    namespaces = {part.event.split("|", 1)[1] for part in inner}
    assert len(namespaces) == 1 and next(iter(namespaces)).startswith("delegate:")
    tokens = [part.data[0]["content"] for part in inner if part.event.startswith("messages|")]
    assert "".join(tokens) == CHAT_ANSWER
    assert [part.data["ask"]["reply"]["content"] for part in inner if part.event.startswith("updates|")] == [
        CHAT_ANSWER]
    assert named(parts, "updates")[-1]["delegate"]["answer"] == CHAT_ANSWER
    flat = [part for part in stream(live_server[0], DELEGATING_CHAT, ["messages-tuple", "updates"])
            if part.event not in ("metadata", "end")]
    assert [part.event for part in flat] == ["messages", "updates"]  # as LangGraph: no subgraph tokens,
    assert (flat[0].data[0]["type"], flat[0].data[0]["content"]) == ("ai", CHAT_ANSWER)  # the node's reply


def test_a_reconnect_mid_token_stream_with_last_event_id_gets_the_rest_once(
        live_server: tuple[str, Path], tmp_path: Path) -> None:
    release = tmp_path / "release"

    async def scenario() -> tuple[list[str], list[str]]:
        client = get_client(url=live_server[0])
        thread = (await client.threads.create(graph_id=CHAT))["thread_id"]
        run = await client.runs.create(thread, CHAT, input={"question": "hi", "release_file": str(release)},
                                       stream_mode=["messages-tuple", "updates"])
        first: list[str] = []
        last_id = None
        modes: Any = ["messages-tuple", "updates"]
        async for part in client.runs.join_stream(thread, run["run_id"], stream_mode=modes):
            if part.event == "messages":
                first.append(part.data[0]["content"])
                last_id = part.id
                if len(first) == 3:
                    break  # the client goes away three tokens in; the node waits for the release file
        release.touch()
        rest = [part async for part in client.runs.join_stream(
            thread, run["run_id"], stream_mode=["messages-tuple", "updates"], last_event_id=last_id)]
        return first, [part.data[0]["content"] for part in rest if part.event == "messages"] + [
            f"<updates:{part.data['chat']['answer']}>" for part in rest if part.event == "updates"]

    first, rest = asyncio.run(scenario())
    assert len(first) == 3 and rest[-1] == f"<updates:{SECOND_ANSWER}>"
    joined = "".join(first + rest[:-1])
    assert joined == CHAT_ANSWER + SECOND_ANSWER


def test_a_last_event_id_with_a_log_cursor_names_a_trail_place_this_server_sends(
        live_server: tuple[str, Path]) -> None:
    parts = stream(live_server[0], CHAT, ["messages-tuple"])
    thread_and_run = parts[0].data
    ids = [part.id for part in parts if part.event == "messages"]
    assert all(len(str(i).split("-")) == 3 for i in ids)
    url = f"{live_server[0]}/threads/{thread_and_run['thread_id']}/runs/{thread_and_run['run_id']}/stream"
    refused = httpx.get(url, params={"stream_mode": "messages-tuple"}, headers={"Last-Event-ID": "1-4-2"})
    assert refused.status_code == 422 and "is not an id this server sent" in refused.json()["detail"]


def test_a_runs_live_log_is_deleted_with_its_thread(live_server: tuple[str, Path]) -> None:
    url, sessions = live_server

    async def scenario() -> str:
        client = get_client(url=url)
        thread = (await client.threads.create(graph_id=CHAT))["thread_id"]
        run = await client.runs.create(thread, CHAT, input={"question": "hi"}, stream_mode=["custom"])
        assert (await client.runs.join(thread, run["run_id"]))["answer"] == CHAT_ANSWER
        assert logged(thread) > 0
        await client.threads.delete(thread)
        return thread

    def logged(thread: str) -> int:
        with sqlite3.connect(sessions / "runs.db") as db:
            found = db.execute("SELECT COUNT(*) FROM run_stream WHERE thread_id = ?", (thread,)).fetchone()
        return int(found[0])

    assert logged(asyncio.run(scenario())) == 0
