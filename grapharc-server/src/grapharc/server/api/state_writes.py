"""Time travel over the API: a checked edit of a thread's state, a run from a past checkpoint (a
fork), and a copy of a thread.

Each is governed as a run is. An edit (``threads.update_state``) is written as one node of the
registered graph, only that node's declared writes, of the state's types (422 naming the field
otherwise), onto the newest checkpoint or a past one, under the thread's lease (409 while a run is
pending or running, the lease is held, or the thread waits on a decision or has ended), and is
recorded on the thread's audit trail with who asked: the bearer token's user, or ``api`` on a server
without an auth file. A fork is a run whose request names a checkpoint; its turn starts from there
and its ``claimed`` entry says ``turn: fork``, the checkpoint and who asked. A copy is a new thread
owned by the caller with the source's graph, state and checkpoint history; its trail begins with
``copied`` (the source's trail, approvals and runs stay with the source).
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from grapharc.runtime.errors import (
    RunInputError,
    StateTypeError,
    UnknownFieldError,
    UnknownNodeError,
    WritePermissionError,
)
from grapharc.server.api import interrupts, shapes
from grapharc.server.api.context import ApiContext, api
from grapharc.server.api.guards import Caller, ReadableThread, asker, refuse_running, require_run
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.threads import CheckpointRef
from grapharc.server.auth import User
from grapharc.session.records import FORK
from grapharc.stores import offload

router = APIRouter(prefix="/threads", tags=["threads"])
Context = Annotated[ApiContext, Depends(api)]

REFUSED_EDITS = (RunInputError, StateTypeError, UnknownFieldError, UnknownNodeError, WritePermissionError)
"""What the graph's checks raise for an edit that does not fit it (a 422: the request is wrong)."""


def checkpoint_named(thread_id: str, checkpoint_id: str | None,
                     checkpoint: CheckpointRef | None) -> str | None:
    """The checkpoint a request names (``checkpoint_id``, or ``checkpoint`` as the SDK sends it);
    both naming different ones is refused."""
    named = checkpoint.of(thread_id) if checkpoint is not None else None
    if named is not None and checkpoint_id is not None and named != checkpoint_id:
        raise ApiProblem(422, f"checkpoint_id {checkpoint_id[:200]!r} and checkpoint.checkpoint_id "
                              f"{named[:200]!r} name different checkpoints", hint="send one of them")
    return checkpoint_id or named


class StateUpdate(BaseModel):
    """POST /threads/{id}/state: values written as ``as_node`` (None: the node LangGraph picks, the
    one that wrote the state last) onto the newest checkpoint or the one named."""

    model_config = ConfigDict(extra="forbid")
    values: dict[str, Any]
    as_node: str | None = Field(default=None, min_length=1, max_length=200)
    checkpoint_id: str | None = Field(default=None, min_length=1, max_length=200)
    checkpoint: CheckpointRef | None = None


@router.post("/{thread_id}/state", dependencies=[ReadableThread])
async def update_state(thread_id: str, body: StateUpdate, ctx: Context, user: Caller) -> dict[str, Any]:
    """A checked write of the thread's state (``threads.update_state``); the new checkpoint."""
    require_run(user, (await offload.to_thread(ctx.manager.get, thread_id)).graph)
    await offload.to_thread(refuse_running, ctx, thread_id, "edit its state")
    at = checkpoint_named(thread_id, body.checkpoint_id, body.checkpoint)
    try:
        written = await offload.to_thread(partial(ctx.manager.update_state, thread_id, body.values,
                                                  as_node=body.as_node, checkpoint_id=at, by=asker(user)))
    except REFUSED_EDITS as exc:
        raise ApiProblem(422, f"the update does not fit the graph's state or node: {exc}",
                         hint=exc.hint or "write only fields the node declares, of the state's types",
                         ) from None
    ctx.progress.notify(thread_id)
    return {"checkpoint": {"thread_id": thread_id, "checkpoint_ns": "",
                           "checkpoint_id": written.get("checkpoint_id"), "checkpoint_map": {}}}


@router.post("/{thread_id}/copy", dependencies=[ReadableThread])
async def copy_thread(thread_id: str, ctx: Context, user: Caller) -> dict[str, Any]:
    """A new thread, owned by the caller, with this one's graph, state and checkpoint history."""
    require_run(user, (await offload.to_thread(ctx.manager.get, thread_id)).graph)
    await offload.to_thread(refuse_running, ctx, thread_id, "copy it")
    copied = await offload.to_thread(partial(ctx.manager.copy, thread_id, by=asker(user),
                                             owner=user.name if user else None,
                                             tenant=user.tenant if user else None))
    values = await offload.to_thread(ctx.manager.values, copied.thread_id)
    return shapes.thread(copied, values, await interrupts.apayloads(ctx.manager, copied))


def fork_request(ctx: ApiContext, thread_id: str, checkpoint_id: str, input: dict[str, Any] | None,
                 user: User | None) -> dict[str, Any]:
    """What a run from the thread's checkpoint ``checkpoint_id`` will do (a 404 naming it if the
    thread lacks it): start from there, with ``input`` or carrying on as that checkpoint stands."""
    ctx.manager.state_at(thread_id, checkpoint_id)
    return {"kind": FORK, "checkpoint_id": checkpoint_id, "input": input, "by": asker(user)}
