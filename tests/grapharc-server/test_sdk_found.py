"""Issue 33's "Found" bugs, through the official ``langgraph-sdk`` client on one real server: a
rejoin without stream modes, a node that raises (``error`` event, ``__error__`` on wait and join),
thread search values and state ids, the ``values`` stream's input snapshot and interrupt, a start
missing a required state field, a value a checkpoint cannot store, and the ids of a stream's last
events."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_graphs import FAILING, OPAQUE, REQUIRED
from langgraph_sdk import get_client
from langgraph_sdk.errors import NotFoundError

CREDIT = "credit-approval"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """One ``grapharc serve`` for the module: its URL and its sessions directory."""
    from server_process import serving

    sessions = tmp_path_factory.mktemp("found") / "sessions"
    with serving(sessions, "--registry", "api_graphs:register") as server:
        yield server.json_announcement()["url"], sessions


def refused_422(match: str) -> Any:
    """``pytest.raises`` for a 422 whose body says ``match`` (the SDK raises a typed error from some
    methods and httpx's own from others)."""
    return pytest.raises(httpx.HTTPStatusError, match=match)


def sdk(served: tuple[str, Path], story: Callable[[Any], Awaitable[None]]) -> None:
    asyncio.run(story(get_client(url=served[0])))


async def _parts(stream: Any) -> list[Any]:
    return [part async for part in stream]


def test_join_stream_without_stream_mode_replays_the_runs_own_modes(served: tuple[str, Path]) -> None:
    async def story(client: Any) -> None:
        thread = (await client.threads.create(graph_id=CREDIT))["thread_id"]
        run = await client.runs.create(thread, CREDIT, input={"application_id": "LN-2204"},
                                       stream_mode=["values", "updates"])
        await client.runs.join(thread, run["run_id"])
        parts = await _parts(client.runs.join_stream(thread, run["run_id"]))  # the SDK sends stream_mode=
        assert {p.event for p in parts} == {"metadata", "values", "updates", "end"}
    sdk(served, story)


def test_a_node_that_raises_fails_wait_and_join_and_the_stream_says_why(served: tuple[str, Path]) -> None:
    async def story(client: Any) -> None:
        thread = (await client.threads.create(graph_id=FAILING))["thread_id"]
        with pytest.raises(Exception, match=r"^LedgerError: the ledger is closed$"):
            await client.runs.wait(thread, FAILING, input={"fail": True})
        run = (await client.runs.list(thread))[0]
        assert run["status"] == "error"
        assert run["metadata"]["error"] == "LedgerError: the ledger is closed"  # the record keeps it
        expected = {"error": "LedgerError", "message": "the ledger is closed"}
        assert await client.runs.join(thread, run["run_id"]) == {"__error__": expected}

        other = (await client.threads.create(graph_id=FAILING))["thread_id"]
        parts = await _parts(client.runs.stream(other, FAILING, input={"fail": True},
                                                stream_mode=["values", "updates"]))
        assert [p.event for p in parts] == ["metadata", "values", "error", "end"]
        assert parts[1].data == {"fail": True}  # the input applied, as LangGraph sends it first
        assert parts[2].data == expected
        assert parts[3].data["status"] == "error"
    sdk(served, story)


def test_search_shows_values_and_a_state_has_its_checkpoint_ids_and_one_id_per_interrupt(
        served: tuple[str, Path]) -> None:
    async def story(client: Any) -> None:
        thread = (await client.threads.create(graph_id=CREDIT))["thread_id"]
        await client.runs.wait(thread, CREDIT, input={"application_id": "LN-7310"})
        got = await client.threads.get(thread)
        found = [t for t in await client.threads.search(metadata={"graph_id": CREDIT}, limit=1000)
                 if t["thread_id"] == thread]
        assert found[0]["values"] == got["values"] and got["values"]["customer"] == "C-5521"
        state = await client.threads.get_state(thread)
        assert state["checkpoint_id"] == state["checkpoint"]["checkpoint_id"] is not None
        assert state["parent_checkpoint_id"] == state["parent_checkpoint"]["checkpoint_id"] is not None
        asked = [i for task in state["tasks"] for i in task["interrupts"]]
        assert [i["id"] for i in asked] == [i["id"] for i in state["interrupts"]]
        assert state["interrupts"][0]["id"].startswith("ap-")  # the approval's: what a resume names
    sdk(served, story)


def test_the_values_stream_begins_with_the_input_and_ends_at_the_interrupt(served: tuple[str, Path]) -> None:
    async def story(client: Any) -> None:
        thread = (await client.threads.create(graph_id=CREDIT))["thread_id"]
        parts = await _parts(client.runs.stream(thread, CREDIT, input={"application_id": "LN-7310"},
                                                stream_mode="values"))
        values = [p.data for p in parts if p.event == "values"]
        assert values[0]["application_id"] == "LN-7310" and "customer" not in values[0]  # no node ran yet
        state = await client.threads.get_state(thread)
        assert values[-1] == {**state["values"], "__interrupt__": [
            {"id": state["interrupts"][0]["id"], "value": state["interrupts"][0]["value"]}]}
        assert all("__interrupt__" not in v for v in values[:-1])
    sdk(served, story)


def test_a_start_missing_a_required_field_is_refused_before_anything_is_stored(
        served: tuple[str, Path]) -> None:
    async def story(client: Any) -> None:
        before = await client.threads.count(metadata={"graph_id": REQUIRED})
        with refused_422("customer"):
            await client.runs.wait(None, REQUIRED, input={})
        with refused_422("customer"):
            await client.runs.create("never-made", REQUIRED, input={}, if_not_exists="create")
        with pytest.raises(NotFoundError):
            await client.threads.get("never-made")
        thread = (await client.threads.create(graph_id=REQUIRED))["thread_id"]
        with refused_422("customer"):
            await client.runs.create(thread, REQUIRED, input={"echoed": "x"})
        assert await client.runs.list(thread) == []
        assert await client.threads.count(metadata={"graph_id": REQUIRED}) == before + 1
        assert (await client.runs.wait(thread, REQUIRED, input={"customer": "C-1"}))["echoed"] == "C-1"
        again = await client.runs.wait(thread, REQUIRED, input={})  # the thread has it now
        assert again == {"customer": "C-1", "echoed": "C-1"}
    sdk(served, story)


def test_a_thread_whose_state_lacks_a_required_field_still_reads(served: tuple[str, Path]) -> None:
    """A thread left so before the refusal above (written here by the library beside the server)."""
    from api_graphs import register

    from grapharc.session.manager import SessionManager

    manager = SessionManager(served[1])
    try:
        register(manager)
        thread = manager.create(REQUIRED).thread_id
        with pytest.raises(Exception, match="customer"):
            manager.run(thread, {})
    finally:
        manager.close()

    async def story(client: Any) -> None:
        assert (await client.threads.get(thread))["status"] == "error"
        state = await client.threads.get_state(thread)
        assert state["values"] == {} and state["next"] == []
    sdk(served, story)


def test_a_value_no_checkpoint_can_store_is_refused_at_the_node(served: tuple[str, Path]) -> None:
    async def story(client: Any) -> None:
        thread = (await client.threads.create(graph_id=OPAQUE))["thread_id"]
        parts = await _parts(client.runs.stream(thread, OPAQUE, input={"opaque": True},
                                                stream_mode="updates"))
        error = next(p.data for p in parts if p.event == "error")
        assert error["error"] == "StateTypeError"
        assert error["message"].startswith("node 'write_opaque' wrote 'payload': expected Any, got Opaque")
        assert "a checkpoint cannot store it" in error["message"]
        # the thread is left failed, at its last checkpoint (the input applied), and says so
        assert (await client.threads.get(thread))["status"] == "error"
        assert (await client.threads.get_state(thread))["values"] == {"opaque": True}
        # a new run starts from there, as on LangGraph's server
        assert (await client.runs.wait(thread, OPAQUE, input={"opaque": False}))["payload"] == "plain"
    sdk(served, story)


def test_every_event_has_its_own_id_and_an_id_never_sent_is_refused(served: tuple[str, Path]) -> None:
    async def story(client: Any) -> None:
        thread = (await client.threads.create(graph_id=CREDIT))["thread_id"]
        run = await client.runs.create(thread, CREDIT, input={"application_id": "LN-2204"},
                                       stream_mode="values")
        parts = await _parts(client.runs.join_stream(thread, run["run_id"]))
        ids = [p.id for p in parts if p.event != "metadata"]
        assert parts[-1].event == "end" and None not in ids and len(set(ids)) == len(ids)
        after_end = await _parts(client.runs.join_stream(thread, run["run_id"], last_event_id=ids[-1]))
        assert [p.event for p in after_end] == ["metadata"]  # nothing is sent twice
        seq = int(ids[-2].split("-")[0])
        for never_sent in (f"{seq + 10_000}-0", f"{seq}-1", f"{seq}-3"):  # past its trail; a mode it
            # does not stream; an error event of a run that did not fail
            with refused_422("is not an id this server sent"):
                await _parts(client.runs.join_stream(thread, run["run_id"], last_event_id=never_sent))
    sdk(served, story)
