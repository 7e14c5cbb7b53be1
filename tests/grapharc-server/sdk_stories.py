"""What the ``langgraph-sdk`` contract tests ask of a server, as stories any client drives: one
``get_client``, or ``Alternating`` between the clients of several workers on one database."""

from __future__ import annotations

from itertools import cycle
from pathlib import Path
from typing import Any

from langgraph_sdk.schema import Command

CREDIT = "credit-approval"


class Alternating:
    """Looks like one SDK client; each call (``client.runs.wait(...)``) goes to the next client."""

    def __init__(self, *clients: Any) -> None:
        self._next = cycle(clients)

    def __getattr__(self, resource: str) -> Any:
        return _Resource(self._next, resource)


class _Resource:
    def __init__(self, clients: Any, name: str) -> None:
        self._clients = clients
        self._name = name

    def __getattr__(self, method: str) -> Any:
        return getattr(getattr(next(self._clients), self._name), method)


async def _stream(client: Any, thread: str, **kwargs: Any) -> list[Any]:
    return [part async for part in client.runs.stream(thread, CREDIT, **kwargs)]


async def stream_to_interrupt_and_resume(client: Any) -> None:
    """Stream a run in every mode to its interrupt, read the thread, resume it with a Command."""
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


async def join_one_run_and_cancel_another(client: Any, tmp_path: Path) -> None:
    """Join a background run and rejoin its stream; cancel a run in flight."""
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


async def list_a_threads_runs(client: Any) -> None:
    """List a thread's runs newest first, page them, filter by status and select fields."""
    thread = (await client.threads.create(graph_id=CREDIT))["thread_id"]
    first = await client.runs.create(thread, CREDIT, input={"application_id": "LN-7310"})
    await client.runs.join(thread, first["run_id"])
    second = await client.runs.create(
        thread, CREDIT, command=Command(resume={"decision": "rejected", "decider": "credit-desk"}))
    await client.runs.join(thread, second["run_id"])

    listed = await client.runs.list(thread)
    assert [run["run_id"] for run in listed] == [second["run_id"], first["run_id"]]
    assert [run["status"] for run in listed] == ["success", "interrupted"]
    assert [r["run_id"] for r in await client.runs.list(thread, limit=1, offset=1)] == [first["run_id"]]
    assert [r["run_id"] for r in await client.runs.list(thread, status="interrupted")] == [first["run_id"]]
    assert await client.runs.list(thread, status="pending") == []
    assert await client.runs.list(thread, select=["run_id", "status"]) == [
        {"run_id": second["run_id"], "status": "success"},
        {"run_id": first["run_id"], "status": "interrupted"}]


async def edit_fork_and_copy(client: Any) -> tuple[str, str]:
    """Edit a finished relay thread's state (as the node LangGraph picks), fork a run from the
    checkpoint before its middle leg, copy the thread; the thread's id and the copy's."""
    thread = (await client.threads.create(graph_id="relay"))["thread_id"]
    await client.runs.wait(thread, "relay", input={})
    edited = await client.threads.update_state(thread, {"legs": ["edited"]})
    state = await client.threads.get_state(thread)
    assert state["values"]["legs"] == ["edited"]
    assert state["checkpoint"]["checkpoint_id"] == edited["checkpoint"]["checkpoint_id"]
    history = await client.threads.get_history(thread, limit=100)
    before_middle = next(s["checkpoint"]["checkpoint_id"] for s in history if s["next"] == ["middle_leg"])
    forked = await client.runs.wait(thread, "relay", checkpoint_id=before_middle)
    assert forked["legs"] == ["first", "middle", "last"]  # carried on from before the edit
    copied = await client.threads.copy(thread)
    assert copied["values"] == forked and copied["thread_id"] != thread
    copy_history = await client.threads.get_history(copied["thread_id"], limit=100)
    assert [s["checkpoint"]["checkpoint_id"] for s in copy_history] == [
        s["checkpoint"]["checkpoint_id"] for s in await client.threads.get_history(thread, limit=100)]
    return thread, copied["thread_id"]
