"""Cancelling runs through the official ``langgraph-sdk``, as LangGraph's server does: a cancelled run
leaves its thread where its last checkpoint stands (idle, its work so far kept) and the next run
works; ``action="rollback"`` also discards what the run wrote (a resume's answers too: its thread
waits on the same question again) and deletes it; the multitask
strategies ``interrupt`` and ``rollback`` cancel a thread's run in flight for a new one. Two
``grapharc serve`` processes share the sessions, so a cancel asked on one reaches a run executing
on the other. The relay graph's middle leg holds a run in flight until its release file exists
(and the ask-beside-waiter graph's waiter, beside the credit desk's question)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import aclosing
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_graphs import GATED_WAITER, RELAY
from cancel_graphs import ASK_BESIDE_WAITER, PLAIN_WAITER
from langgraph_sdk import get_client
from langgraph_sdk.schema import Command
from server_process import PATIENCE_SECONDS, ServerProcess, grapharc_serve

from grapharc.examples.approval import CREDIT_DESK

APPROVE = Command(resume={"decision": "approved", "decider": CREDIT_DESK})
REJECT = Command(resume={"decision": "rejected", "decider": CREDIT_DESK})


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, dict[str, str]]]:
    """Two ``grapharc serve`` processes over one session directory: their URLs, and which URL
    each worker (``host:pid:...``) serves, by pid."""
    sessions = tmp_path_factory.mktemp("cancel") / "sessions"
    command = grapharc_serve("--port", "0", "--json", "--sessions", str(sessions), "--registry",
                             "cancel_graphs:register")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(Path(__file__).parent))
        with ServerProcess(command) as first, ServerProcess(command) as second:
            urls = [server.json_announcement()["url"] for server in (first, second)]
            by_pid = {str(first.process.pid): urls[0], str(second.process.pid): urls[1]}
            yield urls[0], urls[1], by_pid


async def _done(client: Any, thread: str, run_id: str, node: str = "first_leg") -> None:
    """Wait, on the run's own stream, until ``node`` is done (the relay's middle leg waits then)."""
    async with aclosing(client.runs.join_stream(thread, run_id, stream_mode="updates")) as parts:
        async for part in parts:
            if part.event == "updates" and node in part.data:
                return
    raise AssertionError(f"run {run_id} ended before {node} was done")


async def _start_relay(client: Any, release: Path) -> tuple[str, str]:
    """A relay thread whose run is in flight, held on its middle leg until ``release`` exists."""
    thread = (await client.threads.create(graph_id=RELAY))["thread_id"]
    run = await client.runs.create(thread, RELAY, input={"release_file": str(release)})
    await _done(client, thread, run["run_id"])
    return thread, run["run_id"]


async def _parts(stream: Any) -> list[tuple[str, Any]]:
    """Every (event, data) of an SDK stream, to its end."""
    return [(part.event, part.data) async for part in stream]


def _trail(url: str, thread: str) -> list[dict[str, Any]]:
    """The thread's audit trail (GraphARC's own ``/trace`` route)."""
    text = httpx.get(f"{url}/threads/{thread}/trace", timeout=30).text
    return [json.loads(line) for line in text.splitlines()]


def _cancels(url: str, thread: str) -> list[dict[str, Any]]:
    return [entry["detail"] for entry in _trail(url, thread) if entry["kind"] == "cancelled"]


def _released(tmp_path: Path, name: str) -> Path:
    released = tmp_path / name
    released.touch()
    return released


def test_a_cancelled_run_leaves_its_thread_idle_with_its_work_and_the_next_run_works(
        servers: tuple[str, str, dict[str, str]], tmp_path: Path) -> None:
    url = servers[0]

    async def story() -> None:
        client = get_client(url=url)
        held = tmp_path / "held"
        thread, run_id = await _start_relay(client, held)
        await client.runs.cancel(thread, run_id, wait=True)
        held.touch()  # the cancelled middle leg's worker thread may finish now
        assert (await client.runs.get(thread, run_id))["status"] == "interrupted"
        after = await client.threads.get(thread)
        assert after["status"] == "idle"
        assert after["values"]["legs"] == ["first"]  # the work done before the cancel is kept
        assert _cancels(url, thread) == [{"runner": _cancels(url, thread)[0]["runner"], "by": "api",
                                          "run": run_id, "action": "interrupt", "status": "completed"}]

        again = await client.runs.wait(thread, RELAY, input={"release_file": str(_released(tmp_path, "go"))})
        assert again["legs"] == ["first", "first", "middle", "last"]  # the new input starts afresh
        assert (await client.threads.get(thread))["status"] == "idle"

    asyncio.run(story())


def test_a_cancel_asked_on_another_server_reaches_the_run_executing_on_this_one(
        servers: tuple[str, str, dict[str, str]], tmp_path: Path) -> None:
    first, second, by_pid = servers

    async def story() -> None:
        held = tmp_path / "held"
        thread, run_id = await _start_relay(get_client(url=first), held)
        worker = (await get_client(url=first).runs.get(thread, run_id))["metadata"]["grapharc"]["worker"]
        executing = by_pid[worker.split(":")[1]]
        elsewhere = get_client(url=second if executing == first else first)
        await elsewhere.runs.cancel(thread, run_id, wait=True)
        held.touch()
        assert (await elsewhere.runs.get(thread, run_id))["status"] == "interrupted"
        assert (await elsewhere.threads.get(thread))["status"] == "idle"
        go = _released(tmp_path, "go")
        again = await elsewhere.runs.wait(thread, RELAY, input={"release_file": str(go)})
        assert again["legs"][-1] == "last"

    asyncio.run(story())


def test_a_cancel_with_rollback_deletes_the_run_and_what_it_wrote(
        servers: tuple[str, str, dict[str, str]], tmp_path: Path) -> None:
    url = servers[0]

    async def story() -> None:
        client = get_client(url=url)
        thread = (await client.threads.create(graph_id=RELAY))["thread_id"]
        done = await client.runs.create(thread, RELAY, input={"release_file": str(_released(tmp_path, "go"))})
        await client.runs.join(thread, done["run_id"])
        before = await client.threads.get_state(thread)
        held = tmp_path / "held"
        doomed = await client.runs.create(thread, RELAY, input={"release_file": str(held)})
        await _done(client, thread, doomed["run_id"])

        await client.runs.cancel(thread, doomed["run_id"], wait=True, action="rollback")
        held.touch()
        with pytest.raises(httpx.HTTPStatusError) as gone:
            await client.runs.get(thread, doomed["run_id"])
        assert gone.value.response.status_code == 404
        assert [run["run_id"] for run in await client.runs.list(thread)] == [done["run_id"]]
        after = await client.threads.get_state(thread)
        assert after["values"] == before["values"]
        assert after["checkpoint"]["checkpoint_id"] == before["checkpoint"]["checkpoint_id"]
        history = await client.threads.get_history(thread, limit=100)
        assert {state["metadata"].get("run_id") for state in history} == {done["run_id"]}
        assert (await client.threads.get(thread))["status"] == "idle"
        assert [(c["run"], c["action"]) for c in _cancels(url, thread)] == [(doomed["run_id"], "rollback")]

        again = await client.runs.wait(thread, RELAY, input={"release_file": str(_released(tmp_path, "go"))})
        assert again["legs"] == ["first", "middle", "last", "first", "middle", "last"]

    asyncio.run(story())


def test_a_run_cancelled_after_asking_for_an_approval_leaves_its_thread_waiting_on_it(
        servers: tuple[str, str, dict[str, str]], tmp_path: Path) -> None:
    url = servers[0]

    async def story() -> None:
        client = get_client(url=url)
        held = tmp_path / "held"
        thread = (await client.threads.create(graph_id=ASK_BESIDE_WAITER))["thread_id"]
        run = await client.runs.create(thread, ASK_BESIDE_WAITER, input={"release_file": str(held)})
        async with asyncio.timeout(PATIENCE_SECONDS):  # until the desk's question is saved
            while not any(task["interrupts"] for task in (await client.threads.get_state(thread))["tasks"]):
                await asyncio.sleep(0.05)
        await client.runs.cancel(thread, run["run_id"], wait=True)
        held.touch()
        paused = await client.threads.get(thread)
        assert paused["status"] == "interrupted"
        assert [i["value"] for i in paused["interrupts"][""]] == ["may the waiter go on?"]
        assert [c["status"] for c in _cancels(url, thread)] == ["paused"]
        done = await client.runs.wait(thread, ASK_BESIDE_WAITER, command=APPROVE)
        assert (done["answer"], done["released"]) == ("approved", True)

    asyncio.run(story())


@pytest.mark.parametrize(("graph", "asker", "answers", "field"), [
    (GATED_WAITER, "ask_the_desk", (APPROVE, REJECT), "answer"),
    (PLAIN_WAITER, "ask_plainly", (Command(resume={"soup": 1}), Command(resume=["tea", None])), "reply"),
])
def test_a_resume_rolled_back_leaves_its_thread_paused_on_the_same_question_unanswered(
        servers: tuple[str, str, dict[str, str]], tmp_path: Path, graph: str, asker: str,
        answers: tuple[Command, Command], field: str) -> None:
    url = servers[0]

    async def story() -> None:
        client = get_client(url=url)
        held = tmp_path / "held"
        thread = (await client.threads.create(graph_id=graph))["thread_id"]
        first = await client.runs.create(thread, graph, input={"release_file": str(held)})
        await client.runs.join(thread, first["run_id"])
        paused, before = await client.threads.get(thread), await client.threads.get_state(thread)
        resume = await client.runs.create(thread, graph, command=answers[0])
        await _done(client, thread, resume["run_id"], asker)  # answered; the turn waits on its release file

        await client.runs.cancel(thread, resume["run_id"], wait=True, action="rollback")
        held.touch()
        history = await client.threads.get_history(thread, limit=100)
        assert {state["metadata"].get("run_id") for state in history} == {first["run_id"]}
        after, state = await client.threads.get(thread), await client.threads.get_state(thread)
        assert after["status"] == "interrupted"
        assert after["interrupts"] == paused["interrupts"]  # the same question, under the same id
        assert (state["checkpoint"], state["values"], state["next"]) == (
            before["checkpoint"], before["values"], before["next"])
        assert [task["interrupts"] for task in state["tasks"]] == [t["interrupts"] for t in before["tasks"]]
        [asked] = paused["interrupts"][""]
        trail = _trail(url, thread)
        assert [e["kind"] for e in trail][-5:] == ["decided", "claimed", "node", "run", "cancelled"]
        assert trail[-1]["detail"]["reopened"] == [asked["id"]] and trail[-1]["detail"]["status"] == "paused"

        done = await client.runs.wait(thread, graph, command=answers[1])  # answered afresh, it goes on
        decided = answers[1]["resume"]
        assert done[field] == (decided["decision"] if isinstance(decided, dict) else decided)
        assert done["released"] is True

    asyncio.run(story())


@pytest.mark.parametrize("strategy", ["interrupt", "rollback"])
def test_a_new_run_with_an_interrupt_or_rollback_strategy_cancels_the_run_in_flight(
        servers: tuple[str, str, dict[str, str]], tmp_path: Path, strategy: str) -> None:
    url = servers[0]

    async def story() -> None:
        client = get_client(url=url)
        held = tmp_path / "held"
        thread, first = await _start_relay(client, held)
        streamed = asyncio.create_task(_parts(client.runs.join_stream(thread, first, stream_mode="updates")))
        go = _released(tmp_path, "go")
        second = await client.runs.create(thread, RELAY, input={"release_file": str(go)},
                                          multitask_strategy=strategy)
        values = await client.runs.join(thread, second["run_id"])
        held.touch()
        assert (await client.runs.get(thread, second["run_id"]))["status"] == "success"
        ended = "interrupted" if strategy == "interrupt" else "rollback"
        if strategy == "interrupt":  # the first run's work so far is kept, its record interrupted
            assert (await client.runs.get(thread, first))["status"] == "interrupted"
            assert values["legs"] == ["first", "first", "middle", "last"]  # its first leg, then the new run's
        else:  # the first run and everything it wrote are gone
            assert [run["run_id"] for run in await client.runs.list(thread)] == [second["run_id"]]
            assert values["legs"] == ["first", "middle", "last"]
        assert (await streamed)[-1] == ("end", {"run_id": first, "status": ended})  # its stream ends
        assert [(c["run"], c["action"]) for c in _cancels(url, thread)] == [(first, strategy)]

    asyncio.run(story())
