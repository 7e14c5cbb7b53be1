"""A run's ``config`` and ``context`` through the official clients on a real ``grapharc serve``: the
configurable keys a graph declares, its context, tags and recursion limit reach its nodes (the
iteration budget still bounds the recursion limit); keys a caller may not set are refused with 422
naming them and nothing stored; the schemas say what a run may set; a reclaimed run keeps its
config; and LangGraph's ``RemoteGraph`` works: invoke, stream, state, history, sync and async, a
resume, and as a node of a local graph."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

import httpx
import pytest
from config_graphs import CONFIGURED, CONFIGURED_RELAY
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph
from langgraph.pregel.remote import RemoteGraph
from langgraph.types import Command
from langgraph_sdk import get_client, get_sync_client
from server_process import ServerProcess, grapharc_serve

CEILING = 20  # the server's --max-iterations: LangGraph's recursion limit is held to CEILING + 2
ADA = {"configurable": {"user_id": "ada", "model": "mock/careful"}, "tags": ["blue"]}


def _serve(sessions: Path, *options: str) -> ServerProcess:
    return ServerProcess(grapharc_serve("--port", "0", "--json", "--sessions", str(sessions),
                                        "--registry", "api_graphs:register", "--registry",
                                        "config_graphs:register_configured", "--max-iterations", str(CEILING),
                                        *options))


@pytest.fixture(scope="module", autouse=True)
def _graphs_importable() -> Iterator[None]:
    """The servers import api_graphs.py and config_graphs.py from beside this file."""
    with pytest.MonkeyPatch.context() as patch:
        beside = str(Path(__file__).parent)
        patch.setenv("PYTHONPATH", os.pathsep.join([beside, os.environ.get("PYTHONPATH", "")]))
        yield


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory, _graphs_importable: None) -> Iterator[str]:
    """One server for the module's tests (they share nothing but the graphs)."""
    with _serve(tmp_path_factory.mktemp("run-config") / "sessions") as server:
        yield server.json_announcement()["url"]


def test_configurable_keys_context_tags_and_recursion_limit_reach_the_node(url: str) -> None:
    async def story() -> None:
        client = get_client(url=url)
        thread = (await client.threads.create(graph_id=CONFIGURED))["thread_id"]
        first = await client.runs.wait(thread, CONFIGURED, input={}, config={**ADA, "recursion_limit": 5},
                                       context={"tone": "formal"})
        assert first["heard"] == ["ada|mock/careful|formal|blue|5"]
        above = await client.runs.wait(thread, CONFIGURED, input={}, config={"recursion_limit": 1000})
        assert above["heard"][-1] == f"anonymous|mock/echo|plain||{CEILING + 2}"  # the budget wins
    asyncio.run(story())


def test_the_sync_client_runs_and_streams_a_stateless_run_with_its_config(url: str) -> None:
    client = get_sync_client(url=url)
    waited = client.runs.wait(None, CONFIGURED, input={}, config=ADA, context={"tone": "formal"})
    assert waited["heard"] == [f"ada|mock/careful|formal|blue|{CEILING + 2}"]
    values = [part.data for part in client.runs.stream(None, CONFIGURED, input={}, stream_mode="values",
                                                       config={"configurable": {"user_id": "bo"}})
              if part.event == "values"]
    assert values[-1]["heard"] == [f"bo|mock/echo|plain||{CEILING + 2}"]


@pytest.mark.parametrize(("body", "named"), [
    ({"config": {"configurable": {"thread_id": "elsewhere"}}}, "config.configurable.thread_id"),
    ({"config": {"configurable": {"checkpoint_ns": "a"}}}, "config.configurable.checkpoint_ns"),
    ({"config": {"configurable": {"checkpoint_id": "1f0"}}}, "config.configurable.checkpoint_id"),
    ({"config": {"configurable": {"grapharc_budget": 1}}}, "config.configurable.grapharc_budget"),
    ({"config": {"configurable": {"temperature": 2}}}, "config.configurable.temperature"),
    ({"config": {"configurable": {"model": "gpt-9"}}}, "config.configurable.model"),
    ({"config": {"recursion_limit": 0}}, "recursion_limit"),
    ({"config": {"run_name": "mine"}}, "run_name"),
    ({"context": {"tone": "shouty"}}, "context.tone"),
])
def test_what_a_caller_may_not_set_is_refused_naming_it_and_nothing_is_stored(
        url: str, body: dict[str, Any], named: str) -> None:
    async def story() -> None:
        client = get_client(url=url)
        before = await client.threads.count()
        for thread in (None, "never-made"):  # a stateless run; a run that would create its thread
            with pytest.raises(httpx.HTTPStatusError) as refused:  # runs.wait raises httpx's own
                await client.runs.wait(thread, CONFIGURED, input={}, if_not_exists="create", **body)
            assert refused.value.response.status_code == 422
            problem = refused.value.response.json()
            assert named in problem["detail"] or named in str(problem["errors"])
        assert await client.threads.count() == before
    asyncio.run(story())


def test_context_is_refused_for_a_graph_that_declares_none(url: str) -> None:
    client = get_sync_client(url=url)
    with pytest.raises(httpx.HTTPStatusError) as refused:
        client.runs.wait(None, "waiter", input={}, context={"tone": "formal"})
    assert refused.value.response.status_code == 422
    assert refused.value.response.json()["errors"][0]["loc"] == ["context"]


def test_the_schemas_show_the_declared_config_and_context(url: str) -> None:
    client = get_sync_client(url=url)
    schemas = client.assistants.get_schemas(CONFIGURED)
    settings = schemas["config_schema"]["$defs"]["Settings"]["properties"]
    assert set(settings) == {"user_id", "model"}
    assert schemas["config_schema"]["properties"]["configurable"]["$ref"] == "#/$defs/Settings"
    assert schemas["context_schema"]["properties"]["tone"]["enum"] == ["plain", "formal"]
    plain = client.assistants.get_schemas("waiter")
    assert plain["config_schema"] is None and plain["context_schema"] is None


def test_remote_graph_invokes_streams_and_reads_state_and_history(url: str) -> None:
    remote = RemoteGraph(CONFIGURED, url=url)
    config = {"configurable": {"thread_id": "remote-sync", "user_id": "cy"}, "tags": ["t"]}
    line = f"cy|mock/echo|plain|t|{CEILING + 2}"
    assert remote.invoke({}, config) == {"heard": [line]}  # if_not_exists: the thread is made
    assert list(remote.stream({}, config, stream_mode="updates")) == [{"hear": {"heard": [line, line]}}]
    state = remote.get_state(config)
    assert state.values == {"heard": [line, line]} and state.next == ()
    history = list(remote.get_state_history(config))
    assert history[0].config == state.config and history[-1].values == {}
    assert len(history) == 6  # per run: input, start, the node
    older = [snapshot.config for snapshot in remote.get_state_history(history[2].config)]
    assert older == [snapshot.config for snapshot in history[2:]]  # from that checkpoint back


def test_remote_graph_async_invokes_streams_and_reads_state_and_history(url: str) -> None:
    async def story() -> None:
        remote = RemoteGraph(CONFIGURED, url=url)
        config = {"configurable": {"thread_id": "remote-async", "user_id": "di"}}
        line = f"di|mock/echo|formal||{CEILING + 2}"
        assert await remote.ainvoke({}, config, context={"tone": "formal"}) == {"heard": [line]}
        chunks = [chunk async for chunk in remote.astream({}, config, context={"tone": "formal"},
                                                          stream_mode="values")]
        assert chunks[-1] == {"heard": [line, line]}
        state = await remote.aget_state(config)
        assert state.values == {"heard": [line, line]}
        history = [snapshot async for snapshot in remote.aget_state_history(config)]
        assert history[0].config == state.config and len(history) == 6
    asyncio.run(story())


def test_remote_graph_answers_the_threads_approval_with_a_command(url: str) -> None:
    remote = RemoteGraph("credit-approval", url=url)
    config = {"configurable": {"thread_id": "remote-credit"}}
    remote.invoke({"application_id": "LN-7310"}, config)  # above the sign-off limit: it asks
    asked = remote.get_state(config).interrupts
    assert len(asked) == 1 and "release EUR 24,000.00" in asked[0].value
    answered = remote.invoke(Command(resume={"decision": "approved", "decider": "credit-desk"}), config)
    assert answered["released"] is True and answered["answer"] == "approved"


class _LocalState(TypedDict):
    heard: list[str]


def test_a_local_graph_runs_a_remote_graph_as_its_node(url: str) -> None:
    local = StateGraph(_LocalState)
    local.add_node("remote", RemoteGraph(CONFIGURED, url=url))
    local.add_edge("__start__", "remote")
    graph = local.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "local-parent", "user_id": "eve"}}
    line = f"eve|mock/echo|plain||{CEILING + 2}"
    parts = list(graph.stream({"heard": []}, config, stream_mode="updates", subgraphs=True))
    assert parts[-1] == ((), {"remote": {"heard": [line]}})
    assert any(namespace and namespace[0].startswith("remote:") for namespace, _update in parts)
    assert graph.get_state(config).values == {"heard": [line]}
    remote_thread = get_sync_client(url=url).threads.get_state("local-parent")  # the parent's thread id
    assert remote_thread["values"] == {"heard": [line]}


def test_a_reclaimed_run_runs_its_last_node_with_the_config_it_was_given(tmp_path: Path) -> None:
    sessions, release = tmp_path / "sessions", tmp_path / "release"

    async def start_and_see_the_first_leg(url: str) -> tuple[str, str]:
        client = get_client(url=url)
        thread = (await client.threads.create(graph_id=CONFIGURED_RELAY))["thread_id"]
        run = await client.runs.create(thread, CONFIGURED_RELAY, input={"release_file": str(release)},
                                       config=ADA, context={"tone": "formal"})
        async for part in client.runs.join_stream(thread, run["run_id"], stream_mode="updates"):
            if part.event == "updates" and "hear_first" in part.data:
                return thread, run["run_id"]
        raise AssertionError("the run's stream ended before its first leg")

    with _serve(sessions, "--lease", "2") as first:
        thread, run = asyncio.run(start_and_see_the_first_leg(first.json_announcement()["url"]))
        first.send(signal.SIGKILL)  # mid-run: its middle leg waits for the release file
        first.wait()
    release.touch()
    with _serve(sessions, "--lease", "2") as second:
        client = get_sync_client(url=second.json_announcement()["url"])
        line = f"ada|mock/careful|formal|blue|{CEILING + 2}"
        assert client.runs.join(thread, run)["heard"] == [line, line]
        assert client.runs.get(thread, run)["metadata"]["grapharc"]["attempts"] == 2
