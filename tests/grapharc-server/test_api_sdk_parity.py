"""What LangGraph's own server says of a run and a thread, said the same way here, through the
official ``langgraph-sdk`` client on one real ``grapharc serve``: the stream's ``metadata`` event
names the run's attempt; a run shows the arguments it was created with (``kwargs``) and its
assistant and graph; a thread shows its newest run's config, when its state last changed and,
once it has run, its assistant; a token's metadata and a checkpoint's carry the run's assistant,
graph, attempt and LangGraph's version; the ``events`` mode announces each node's start."""

from __future__ import annotations

import asyncio
from importlib.metadata import version
from typing import Any

import httpx
from api_graphs import CHAT
from langgraph_sdk import get_client
from sdk_stories import CREDIT
from server_process import api_server_url

server = api_server_url("parity")


def told(tell: Any) -> Any:
    return asyncio.run(tell())


SERVER_KEYS = {"assistant_id": CHAT, "graph_id": CHAT, "run_attempt": 1,
               "langgraph_version": version("langgraph")}


def test_a_streams_metadata_event_names_the_run_and_its_attempt(server: str) -> None:
    async def tell() -> list[Any]:
        client = get_client(url=server)
        thread = (await client.threads.create(graph_id=CHAT))["thread_id"]
        return [part async for part in client.runs.stream(thread, CHAT, input={"question": "hi"})]

    first = told(tell)[0]
    assert first.event == "metadata"
    assert first.data["attempt"] == 1 and first.data["run_id"]


def test_a_run_shows_what_it_was_created_with_and_its_assistant_and_graph(server: str) -> None:
    async def tell() -> tuple[dict[str, Any], dict[str, Any]]:
        client = get_client(url=server)
        thread = (await client.threads.create(graph_id=CHAT))["thread_id"]
        created = await client.runs.create(thread, CHAT, input={"question": "why?"}, metadata={"by": "test"},
                                           config={"tags": ["parity"], "recursion_limit": 9},
                                           stream_mode=["values", "messages-tuple"], interrupt_after=["chat"])
        await client.runs.join(thread, created["run_id"])
        return created, await client.runs.get(thread, created["run_id"])

    created, fetched = told(tell)
    for run in (created, fetched):
        kwargs = run["kwargs"]
        assert kwargs["input"] == {"question": "why?"} and kwargs["command"] is None
        assert kwargs["config"] == {"configurable": {}, "tags": ["parity"], "metadata": {},
                                    "recursion_limit": 9}
        assert kwargs["stream_mode"] == ["values", "messages-tuple"]
        assert (kwargs["interrupt_before"], kwargs["interrupt_after"]) == (None, ["chat"])
        assert (kwargs["subgraphs"], kwargs["temporary"], kwargs["durability"]) == (False, False, "sync")
        assert {key: run["metadata"][key] for key in ("by", "assistant_id", "graph_id")} == {
            "by": "test", "assistant_id": CHAT, "graph_id": CHAT}
        assert "created_by" not in run["metadata"]  # no signed-in user: nobody to name


def test_a_resume_shows_its_command_and_no_input(server: str) -> None:
    async def tell() -> dict[str, Any]:
        client = get_client(url=server)
        thread = (await client.threads.create(graph_id=CREDIT))["thread_id"]
        await client.runs.wait(thread, CREDIT, input={"application_id": "LN-7310"})
        resumed = await client.runs.create(thread, CREDIT, command={
            "resume": {"decision": "rejected", "decider": "credit-desk"}})
        return resumed["kwargs"]

    kwargs = told(tell)
    assert kwargs["input"] is None
    assert kwargs["command"] == {"resume": {"decision": "rejected", "decider": "credit-desk"}}


def test_a_thread_shows_its_newest_runs_config_its_assistant_and_when_its_state_changed(server: str) -> None:
    async def tell() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
        client = get_client(url=server)
        fresh = await client.threads.create(graph_id=CHAT, metadata={"team": "a"})
        thread = fresh["thread_id"]
        await client.runs.wait(thread, CHAT, input={"question": "hi"}, config={"tags": ["one"]})
        ran = await client.threads.get(thread)
        await client.threads.update(thread, metadata={"team": "b"})
        patched = await client.threads.get(thread)
        found = await client.threads.search(ids=[thread])
        return fresh, ran, patched, found

    fresh, ran, patched, found = told(tell)
    assert fresh["config"] == {} and fresh["state_updated_at"] == fresh["created_at"]
    assert "assistant_id" not in fresh["metadata"]
    assert ran["config"] == {"configurable": {}, "tags": ["one"]}
    assert ran["metadata"]["assistant_id"] == CHAT and ran["metadata"]["graph_id"] == CHAT
    assert ran["state_updated_at"] > fresh["state_updated_at"]
    assert patched["state_updated_at"] == ran["state_updated_at"]  # metadata is not state
    assert found[0]["config"] == ran["config"] and found[0]["state_updated_at"] == ran["state_updated_at"]


def test_a_threads_assistant_id_is_graphARCs_to_say(server: str) -> None:
    answer = httpx.post(f"{server}/threads", json={"metadata": {"graph_id": CHAT, "assistant_id": "other"}})
    assert answer.status_code == 422 and "assistant_id" in answer.json()["detail"]


def test_tokens_and_checkpoints_carry_the_runs_assistant_graph_attempt_and_langgraph_version(
        server: str) -> None:
    async def tell() -> tuple[list[Any], dict[str, Any]]:
        client = get_client(url=server)
        thread = (await client.threads.create(graph_id=CHAT))["thread_id"]
        parts = [part async for part in client.runs.stream(thread, CHAT, input={"question": "hi"},
                                                            stream_mode="messages-tuple",
                                                            config={"metadata": {"assistant_id": "mine"}})]
        return parts, await client.threads.get_state(thread)

    parts, state = told(tell)
    tokens = [part.data[1] for part in parts if part.event == "messages"]
    assert tokens and all({key: meta[key] for key in SERVER_KEYS} == SERVER_KEYS for meta in tokens)
    assert {key: state["metadata"][key] for key in SERVER_KEYS} == SERVER_KEYS


def test_the_events_mode_announces_each_nodes_start_once_before_its_chat_model(server: str) -> None:
    async def tell() -> list[dict[str, Any]]:
        client = get_client(url=server)
        thread = (await client.threads.create(graph_id=CHAT))["thread_id"]
        return [part.data async for part in client.runs.stream(thread, CHAT, input={"question": "hi"},
                                                                stream_mode="events")
                if part.event == "events"]

    events = told(tell)
    kinds = [(event["event"], event["name"]) for event in events if event["event"].startswith("on_chain")]
    assert kinds == [("on_chain_start", "chat"), ("on_chain_end", "chat")]
    order = [event["event"] for event in events]
    assert order.index("on_chain_start") < order.index("on_chat_model_start")
    start = events[order.index("on_chain_start")]
    assert start["metadata"]["langgraph_node"] == "chat" and start["data"]["input"]["question"] == "hi"


def test_a_message_in_a_form_the_state_model_cannot_read_is_a_422_naming_the_field(server: str) -> None:
    thread = httpx.post(f"{server}/threads", json={"metadata": {"graph_id": CHAT}}).json()["thread_id"]
    answer = httpx.post(f"{server}/threads/{thread}/runs/wait", json={
        "assistant_id": CHAT, "input": {"question": "hi", "messages": [{"role": "user", "content": "hi"}]}})
    assert answer.status_code == 422, answer.text
    problem = answer.json()
    assert "messages" in problem["detail"] and problem["errors"][0]["loc"] == ["input", "messages"]


def test_with_a_token_a_run_and_its_checkpoints_name_who_created_it(api_server_with_auth: str) -> None:
    from inbox_setup import TOKEN

    async def tell() -> tuple[dict[str, Any], dict[str, Any]]:
        client = get_client(url=api_server_with_auth, headers={"Authorization": f"Bearer {TOKEN}"})
        thread = (await client.threads.create(graph_id=CREDIT))["thread_id"]
        run = await client.runs.create(thread, CREDIT, input={"application_id": "LN-7310"})
        await client.runs.join(thread, run["run_id"])
        return await client.runs.get(thread, run["run_id"]), await client.threads.get_state(thread)

    run, state = told(tell)
    assert run["metadata"]["created_by"] == "alice" == state["metadata"]["created_by"]
