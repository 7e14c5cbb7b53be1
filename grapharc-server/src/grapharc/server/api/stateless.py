"""Stateless runs: a run of a registered graph on a thread made for it, as LangGraph Platform's
``POST /runs``, ``/runs/wait`` and ``/runs/stream`` (the SDK's ``client.runs.*(None, ...)``).

The thread is an ordinary durable session created for the run, and the run names it
(``thread_id``), so a client can read the thread or rejoin the run while it exists.
``on_completion`` says what becomes of it once the run has ended: ``delete`` (the default, as
on LangGraph Platform) removes it ``STATELESS_GRACE_SECONDS`` later, so a client waiting on or
streaming the run reads the end first (``grapharc.server.api.worker``); ``keep`` leaves it. A
thread that ended paused on an approval is kept either way: an open approval is never thrown
away with its thread. A stateless run starts a turn with input; approvals are answered on the
thread's own runs.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

from fastapi import APIRouter

from grapharc.runs.records import RunRecord
from grapharc.server.api import shapes
from grapharc.server.api.assistant_lookup import agraph_of
from grapharc.server.api.guards import Caller, require_run
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.runs import Context, RunCreate, check_input, ended, final_values, queue
from grapharc.server.api.streaming import sse_response, stream_modes
from grapharc.server.auth import User
from grapharc.server.event_stream import EventStream
from grapharc.stores import offload

router = APIRouter(prefix="/runs", tags=["runs"])


class StatelessRunCreate(RunCreate):
    """A run-starting body plus what becomes of the run's thread once the run has ended."""

    on_completion: Literal["delete", "keep"] = "delete"


@router.post("")
async def create_stateless_run(body: StatelessRunCreate, ctx: Context, user: Caller) -> dict[str, Any]:
    """Queue a run on a new thread (deleted once the run has ended unless ``on_completion`` is
    ``keep``): its run record, answered at once."""
    return shapes.run(await queue_on_new_thread(ctx, body, user))


@router.post("/wait")
async def wait_stateless_run(body: StatelessRunCreate, ctx: Context, user: Caller) -> dict[str, Any]:
    """Run on a new thread and wait for the run to end: the thread's values then, as a thread's
    ``/wait`` answers."""
    return await final_values(ctx, await ended(ctx, await queue_on_new_thread(ctx, body, user)))


@router.post("/stream")
async def stream_stateless_run(body: StatelessRunCreate, ctx: Context, user: Caller) -> EventStream:
    """Run on a new thread, streamed as server-sent events as a thread's ``/stream`` streams."""
    modes = stream_modes(body.stream_mode)
    run = await queue_on_new_thread(ctx, body, user)
    return sse_response(ctx, run, modes, None, cancel_on_disconnect=body.on_disconnect == "cancel")


async def queue_on_new_thread(ctx: Context, body: StatelessRunCreate, user: User | None) -> RunRecord:
    """Create the run's thread and queue the run there; a request refused on the way (a command,
    bad input or stream mode, a budget above the ceiling) leaves no thread behind."""
    if body.command is not None:
        raise ApiProblem(422, "a stateless run starts a new thread, which has no approval to answer",
                         hint="answer an approval with a run on its own thread: POST /threads/{id}/runs")
    graph = await agraph_of(ctx, body.assistant_id, user)
    require_run(user, graph.name)
    check_input(ctx, graph.name, body.input or {}, {})  # before the thread is made (it would have no values)
    session = await offload.to_thread(partial(ctx.manager.create, graph.name,
                                              owner=user.name if user else None,
                                              tenant=user.tenant if user else None))
    try:
        return await queue(ctx, session.thread_id, body, user, on_completion=body.on_completion)
    except BaseException:
        await offload.to_thread(ctx.manager.delete, session.thread_id)
        raise
