"""Time travel through the official ``langgraph-sdk`` against one real ``grapharc serve`` (with an auth
file: alice's token): ``threads.update_state`` as a checked write (declared writes of its node, the
state's types, the thread's lease, the audit trail with who asked), a run from a past checkpoint (a
fork, on the trail as one) and ``threads.copy`` (a new thread whose trail begins with ``copied``)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_graphs import GATED_WAITER, WAITER
from inbox_setup import TOKEN, write_auth_file
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from time_travel_graphs import DRAFTS

HEADERS = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One server for the module, its graphs api_graphs.py's and time_travel_graphs.py's."""
    from server_process import serving

    tmp = tmp_path_factory.mktemp("time-travel")
    with serving(tmp / "sessions", "--registry", "api_graphs:register",
                 "--registry", "time_travel_graphs:register",
                 "--auth-file", str(write_auth_file(tmp / "auth.toml"))) as process:
        yield process.json_announcement()["url"]


def _client(url: str) -> LangGraphClient:
    return get_client(url=url, headers=HEADERS)


def _trail(url: str, thread: str) -> list[dict[str, Any]]:
    """The thread's audit trail, as GET /threads/{id}/trace answers it."""
    import json

    answer = httpx.get(f"{url}/threads/{thread}/trace", headers=HEADERS, timeout=30)
    return [json.loads(line) for line in answer.text.splitlines()]


async def _refused(call: Any) -> tuple[int, str]:
    """The status and detail of a request the server refuses."""
    try:
        await call
    except httpx.HTTPStatusError as refused:  # the SDK's APIStatusError is one; runs.wait raises httpx's
        return refused.response.status_code, refused.response.json()["detail"]
    raise AssertionError("the request was accepted")


async def _drafted(client: LangGraphClient, topic: str = "tides") -> str:
    """A drafts thread run to its end."""
    thread = (await client.threads.create(graph_id=DRAFTS))["thread_id"]
    await client.runs.wait(thread, DRAFTS, input={"topic": topic})
    return str(thread)


def test_update_state_writes_a_checkpoint_as_a_node_and_records_who_asked(server: str) -> None:
    async def story() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], str]:
        client = _client(server)
        thread = await _drafted(client)
        named = await client.threads.update_state(thread, {"verdict": "returned"}, as_node="review")
        picked = await client.threads.update_state(thread, {"verdict": "again"})  # review wrote last
        return named, picked, await client.threads.get_state(thread), thread

    named, picked, state, thread = asyncio.run(story())
    assert state["values"]["verdict"] == "again"
    assert state["checkpoint"]["checkpoint_id"] == picked["checkpoint"]["checkpoint_id"]
    assert state["parent_checkpoint"]["checkpoint_id"] == named["checkpoint"]["checkpoint_id"]
    updates = [e["detail"] for e in _trail(server, thread) if e["kind"] == "updated"]
    written = [(u["by"], u["as_node"], u["fields"], u["checkpoint_id"]) for u in updates]
    assert written == [("alice", "review", ["verdict"], named["checkpoint"]["checkpoint_id"]),
                       ("alice", "review", ["verdict"], picked["checkpoint"]["checkpoint_id"])]


def test_update_state_refuses_what_the_node_or_the_state_does_not_take_and_stores_nothing(
        server: str) -> None:
    async def story() -> tuple[list[tuple[int, str]], int, int, dict[str, Any], dict[str, Any]]:
        client = _client(server)
        thread = await _drafted(client)
        before = await client.threads.get_state(thread)
        history = len(await client.threads.get_history(thread, limit=100))
        edits = (({"text": "forged"}, None),  # the node LangGraph picks, review, does not write text
                 ({"text": "forged"}, "review"), ({"drafts": "many"}, "draft"), ({"topic": "x"}, "nowhere"),
                 ({"text": "forged"}, "__start__"))  # input is a run's, not an edit's to name
        refusals = [await _refused(client.threads.update_state(thread, values, as_node=node))
                    for values, node in edits]
        refusals.append(await _refused(client.threads.update_state(thread, {"verdict": "x"},
                                                                   checkpoint_id="no-such-checkpoint")))
        after = await client.threads.get_state(thread)
        return refusals, history, len(await client.threads.get_history(thread, limit=100)), before, after

    refusals, history_before, history_after, before, after = asyncio.run(story())
    assert [status for status, _ in refusals] == [422, 422, 422, 422, 422, 404]
    assert "'text'" in refusals[0][1] and "'review'" in refusals[0][1]
    assert "'drafts'" in refusals[2][1] and "int" in refusals[2][1]
    assert "'nowhere'" in refusals[3][1] and "'__start__'" in refusals[4][1]
    assert "no-such-checkpoint" in refusals[5][1]
    assert (history_after, after["values"], after["checkpoint"]) == (history_before, before["values"],
                                                                    before["checkpoint"])


def test_update_state_waits_for_the_threads_run_and_decision(server: str, tmp_path: Path) -> None:
    release = tmp_path / "release"

    async def story() -> tuple[tuple[int, str], tuple[int, str], dict[str, Any]]:
        client = _client(server)
        waiting = (await client.threads.create(graph_id=WAITER))["thread_id"]
        run = await client.runs.create(waiting, WAITER, input={"release_file": str(release)})
        during_run = await _refused(client.threads.update_state(waiting, {"released": True},
                                                                as_node="wait_for_release"))
        release.touch()
        await client.runs.join(waiting, run["run_id"])
        gated = (await client.threads.create(graph_id=GATED_WAITER))["thread_id"]
        await client.runs.wait(gated, GATED_WAITER, input={"release_file": str(release)})
        paused = await _refused(client.threads.update_state(gated, {"answer": "yes"}, as_node="ask_the_desk"))
        return during_run, paused, await client.threads.get_state(waiting)

    during_run, paused, waited = asyncio.run(story())
    assert during_run[0] == 409 and "run pending or in flight" in during_run[1]
    assert paused[0] == 409 and "waits on a decision" in paused[1]
    assert waited["values"]["released"] is True


def test_a_run_from_a_past_checkpoint_forks_the_thread_there(server: str) -> None:
    async def story() -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]], str, str, str,
                               tuple[int, str]]:
        client = _client(server)
        thread = await _drafted(client, "tides")
        history = await client.threads.get_history(thread, limit=100)
        before_draft = next(s["checkpoint"] for s in history if s["next"] == ["draft"])
        before_review = next(s["checkpoint"] for s in history if s["next"] == ["review"])
        retopic = await client.runs.wait(thread, DRAFTS, input={"topic": "storms"},
                                         checkpoint_id=before_draft["checkpoint_id"])
        carried = await client.runs.create(thread, DRAFTS, checkpoint=before_review)
        await client.runs.join(thread, carried["run_id"])
        missing = await _refused(client.runs.wait(thread, DRAFTS, input={},
                                                  checkpoint_id="no-such-checkpoint"))
        state = await client.threads.get_state(thread)
        history = await client.threads.get_history(thread, limit=100)
        return (retopic, state, history, thread, before_draft["checkpoint_id"],
                before_review["checkpoint_id"], missing)

    retopic, carried, history, thread, before_draft, before_review, missing = asyncio.run(story())
    assert retopic["topic"] == "storms" and retopic["verdict"] == "signed: a note on storms"
    assert carried["values"]["verdict"] == "signed: a note on tides"  # the review re-ran on the first draft
    by_id = {s["checkpoint"]["checkpoint_id"]: s for s in history}
    chain, at = [], carried["checkpoint"]["checkpoint_id"]
    while at is not None:
        chain.append(at)
        parent = by_id[at]["parent_checkpoint"]
        at = parent["checkpoint_id"] if parent else None
    assert before_review in chain and before_draft in chain
    trail = _trail(server, thread)
    forks = [e["detail"] for e in trail if e["kind"] == "claimed" and e["detail"]["turn"] == "fork"]
    assert [(f["checkpoint_id"], f["by"]) for f in forks] == [(before_draft, "alice"),
                                                              (before_review, "alice")]
    nodes = [e["node"] for e in trail if e["kind"] == "node"]
    assert nodes == ["draft", "review", "draft", "review", "review"]  # the first run, then each fork's
    assert missing[0] == 404 and "no-such-checkpoint" in missing[1]


def test_copy_makes_a_thread_with_the_state_and_history_and_a_trail_of_its_own(server: str) -> None:
    async def story() -> tuple[dict[str, Any], dict[str, Any], int, int, str]:
        client = _client(server)
        thread = await _drafted(client)
        copied = await client.threads.copy(thread)
        source_history = len(await client.threads.get_history(thread, limit=100))
        await client.runs.wait(copied["thread_id"], DRAFTS, input={"topic": "reefs"})  # the copy runs on
        return (copied, await client.threads.get_state(thread), source_history,
                len(await client.threads.get_history(copied["thread_id"], limit=100)), thread)

    copied, source, source_history, copy_history, thread = asyncio.run(story())
    assert copied["thread_id"] != thread and copied["metadata"]["graph_id"] == DRAFTS
    assert copied["values"] == source["values"] and source["values"]["topic"] == "tides"
    assert copy_history > source_history  # its own run added to the copied history
    trail = _trail(server, copied["thread_id"])
    assert trail[0]["kind"] == "copied"
    copied_from = trail[0]["detail"]
    assert (copied_from["from"], copied_from["by"], copied_from["owner"]) == (thread, "alice", "alice")
    assert not any(e["kind"] == "copied" for e in _trail(server, thread))
    assert [e["node"] for e in trail if e["kind"] == "node"] == ["draft", "review"]  # only its own run's


def test_a_fork_of_a_paused_thread_supersedes_its_open_approval_and_asks_again(server: str,
                                                                              tmp_path: Path) -> None:
    async def story() -> tuple[str, dict[str, Any], dict[str, Any]]:
        client = _client(server)
        gated = (await client.threads.create(graph_id=GATED_WAITER))["thread_id"]
        await client.runs.wait(gated, GATED_WAITER, input={"release_file": str(tmp_path / "release")})
        history = await client.threads.get_history(gated, limit=100)
        before_ask = next(s["checkpoint"]["checkpoint_id"] for s in history if s["next"] == ["ask_the_desk"])
        forked = await client.runs.wait(gated, GATED_WAITER, checkpoint_id=before_ask)
        return gated, forked, await client.threads.get_state(gated)

    gated, forked, state = asyncio.run(story())
    trail = _trail(server, gated)
    first, second = [e["detail"]["approval"] for e in trail if e["kind"] == "asked"]
    [fork] = [e["detail"] for e in trail if e["kind"] == "claimed" and e["detail"]["turn"] == "fork"]
    assert fork["superseded"] == [first]
    assert forked["__interrupt__"][0]["id"] == second == state["interrupts"][0]["id"]


def test_a_fork_of_a_thread_that_does_not_exist_creates_none(server: str) -> None:
    async def story() -> tuple[tuple[int, str], tuple[int, str]]:
        client = _client(server)
        forked = await _refused(client.runs.wait("never-made", DRAFTS, input={}, checkpoint_id="cp-1",
                                                 if_not_exists="create"))
        return forked, await _refused(client.threads.get("never-made"))

    forked, looked_up = asyncio.run(story())
    assert forked[0] == 404 and "never-made" in forked[1]
    assert looked_up[0] == 404


def test_a_thread_metadata_update_is_on_the_trail_with_who_and_which_keys_never_the_values(
        server: str) -> None:
    async def story() -> str:
        client = _client(server)
        thread = (await client.threads.create(graph_id=WAITER, metadata={"team": "desk"}))["thread_id"]
        await client.threads.update(thread, metadata={"team": "audit", "secret": "s3cr3t"})
        return str(thread)

    thread = asyncio.run(story())
    trail = _trail(server, thread)
    changed = [entry for entry in trail if entry["kind"] == "metadata"]
    assert [entry["detail"] for entry in changed] == [{"by": "alice", "keys": ["secret", "team"]}]
    assert "s3cr3t" not in str(trail) and "audit" not in str(changed)
