"""Threads are durable sessions: create, read, search, their state (now or at a past checkpoint) and
history, events, the trace.

With an auth file a thread records the user who created it (and their tenant); a caller finds,
reads and searches only the threads they may read (``grapharc.server.api.guards``), runs only the
assistants they may run and deletes only the threads they may delete."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable
from functools import partial
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from grapharc.server.api import interrupts, metadata, shapes
from grapharc.server.api.context import ApiContext, api, caller_of, context_of
from grapharc.server.api.encoding import json_value
from grapharc.server.api.guards import (
    Caller,
    ReadableThread,
    asker,
    refuse_running,
    require_delete,
    require_run,
)
from grapharc.server.api.problems import ApiProblem
from grapharc.server.auth import User
from grapharc.server.service import access
from grapharc.server.service.trail import trail_ndjson
from grapharc.session.errors import SessionExistsError, UnknownSessionError
from grapharc.session.manager import SessionManager
from grapharc.session.records import STATUSES, Session
from grapharc.stores import offload

router = APIRouter(prefix="/threads", tags=["threads"])
Context = Annotated[ApiContext, Depends(api)]

_SEARCH_STATUS = {"idle": ("created", "completed", "rejected"), "busy": ("running",),
                  "interrupted": ("paused",), "error": ("failed", "expired")}


class ThreadCreate(BaseModel):
    """POST /threads: a thread of a registered graph (``metadata.graph_id``, as the SDK sends it),
    optionally with its id; the rest of ``metadata`` is the thread's own (``api.metadata``)."""

    model_config = ConfigDict(extra="forbid")
    thread_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.:-]{1,128}$")
    metadata: dict[str, Any] | None = None
    if_exists: str | None = Field(default=None, pattern="^(raise|do_nothing)$")


class ThreadCount(BaseModel):
    """POST /threads/count: threads of a LangGraph status word (or GraphARC's) whose metadata (the
    thread's own, and ``graph_id``, ``grapharc_status``, ``outcome``) contains ``metadata`` and whose
    current state contains ``values`` (JSONB containment, as LangGraph's server matches them)."""

    model_config = ConfigDict(extra="forbid")
    status: str | None = None
    metadata: dict[str, Any] | None = None
    values: dict[str, Any] | None = None


class ThreadSearch(ThreadCount):
    """POST /threads/search: as ``ThreadCount`` chooses and only those of ``ids`` if given, most
    recently changed first unless ``sort_by`` names the order (``sort_order``: desc by default),
    paged."""

    ids: list[str] | None = Field(default=None, max_length=1000)
    sort_by: Literal["thread_id", "status", "created_at", "updated_at"] | None = None
    sort_order: Literal["asc", "desc"] = "desc"
    limit: int = Field(default=10, ge=1, le=1000)
    offset: int = Field(default=0, ge=0)


class ThreadPatch(BaseModel):
    """PATCH /threads/{id}: metadata merged into the thread's own, key by key."""

    model_config = ConfigDict(extra="forbid")
    metadata: dict[str, Any]


class CheckpointRef(BaseModel):
    """A checkpoint of a thread as the SDK names one (GraphARC graphs have no subgraph namespaces);
    without ``checkpoint_id`` (as ``RemoteGraph`` names a thread's newest) it is the newest one."""

    model_config = ConfigDict(extra="forbid")
    checkpoint_id: str | None = Field(default=None, min_length=1, max_length=200)
    thread_id: str | None = None
    checkpoint_ns: Literal[""] = ""
    checkpoint_map: dict[str, Any] | None = None

    def of(self, thread_id: str) -> str | None:
        """The checkpoint's id (None: the newest), once it is sure to name one of ``thread_id``'s."""
        if self.thread_id is not None and self.thread_id != thread_id:
            raise ApiProblem(422, f"checkpoint.thread_id {self.thread_id[:200]!r} is not the thread asked "
                                  f"about ({thread_id!r})", hint="leave thread_id out, or name this thread")
        return self.checkpoint_id


class HistoryQuery(BaseModel):
    """POST /threads/{id}/history: the newest ``limit`` checkpoints, or the newest older than
    ``before`` (a checkpoint id, or a checkpoint as the SDK names one) to read the next page; with
    ``metadata`` (the SDK's ``get_history(metadata=)``), only those whose checkpoint metadata has
    its key-value pairs, as LangGraph filters them."""

    model_config = ConfigDict(extra="forbid")
    limit: int = Field(default=10, ge=1, le=1000)
    before: str | CheckpointRef | None = None
    metadata: dict[str, Any] | None = None
    checkpoint: CheckpointRef | None = None
    """Where the page starts, itself included (``RemoteGraph.get_state_history`` sends the thread's
    newest: no ``checkpoint_id``); ``before`` wins when both are given."""

    def before_id(self, thread_id: str) -> str | None:
        """The id of the checkpoint the page starts after (refused if it names another thread)."""
        if isinstance(self.before, CheckpointRef):
            return self.before.of(thread_id)
        return self.before

    def start_id(self, thread_id: str) -> str | None:
        """The id of the checkpoint the page starts at, when ``checkpoint`` names one and no
        ``before`` is given."""
        return self.checkpoint.of(thread_id) if self.checkpoint is not None and self.before is None else None


class StateAtCheckpoint(BaseModel):
    """POST /threads/{id}/state/checkpoint: the thread's state at ``checkpoint``."""

    model_config = ConfigDict(extra="forbid")
    checkpoint: CheckpointRef
    subgraphs: bool = False  # a GraphARC graph has none to show


class EventPost(BaseModel):
    """POST /threads/{id}/events: something said to the thread, delivered at its next turn."""

    model_config = ConfigDict(extra="forbid")
    kind: str = Field(min_length=1, max_length=200)
    payload: dict[str, Any] = Field(default_factory=dict)


@router.post("")
async def create_thread(body: ThreadCreate, request: Request) -> dict[str, Any]:
    """Create a thread of a registered graph (``metadata.graph_id``, needed when several are);
    ``if_exists: do_nothing`` answers an existing thread the caller may read."""
    ctx, user = context_of(request), caller_of(request)
    named = (body.metadata or {}).get("graph_id")
    own = metadata.client_metadata(body.metadata or {}, allowed=("graph_id",))
    graph = named or (ctx.graph_names()[0] if len(ctx.graph_names()) == 1 else None)
    if not isinstance(graph, str):
        raise ApiProblem(422, "metadata.graph_id is needed: this server has more than one graph registered",
                         hint=f"name one of: {', '.join(ctx.graph_names())}")
    require_run(user, graph)
    thread_id = body.thread_id or uuid.uuid4().hex[:12]
    if body.if_exists == "do_nothing":
        with contextlib.suppress(UnknownSessionError):
            found = _readable(await offload.nearby((ctx.manager,), ctx.manager.get, thread_id), user)
            return shapes.thread(found, payloads=await interrupts.apayloads(ctx.manager, found))
    session = await offload.nearby((ctx.manager,), partial(ctx.manager.create, graph,
                                   thread_id=thread_id, owner=user.name if user else None,
                                   tenant=user.tenant if user else None, metadata=own))
    return shapes.thread(session)


@router.patch("/{thread_id}", dependencies=[ReadableThread])
async def update_thread(thread_id: str, body: ThreadPatch, ctx: Context, user: Caller,
                        prefer: Annotated[str, Header()] = "") -> Response:
    """Merge ``metadata`` into the thread's own (a caller who may run its graph may; the trail records
    who changed which keys); the thread, or nothing with ``Prefer: return=minimal``."""
    session = await offload.to_thread(ctx.manager.get, thread_id)
    require_run(user, session.graph)
    given = metadata.client_metadata(body.metadata)
    metadata.check_size({**session.metadata, **given})
    session = await offload.to_thread(partial(ctx.manager.update_metadata, thread_id, given, by=asker(user)))
    if "return=minimal" in prefer:
        return Response(status_code=204)
    shown, = await offload.to_thread(_shown, ctx, [session])
    return JSONResponse(shown)


def _readable(session: Session, user: User | None) -> Session:
    """``session``, if ``user`` may read it; else the id is only said to be taken (409), as creating
    it would say (a caller's own thread id names one thread among everyone's)."""
    if not access.may_read(user, session):
        raise SessionExistsError(f"a session with thread id {session.thread_id!r} already exists",
                                 hint="leave out the thread id to get a fresh one")
    return session


@router.post("/search")
async def search_threads(body: ThreadSearch, ctx: Context, user: Caller) -> list[dict[str, Any]]:
    """The threads the caller may read, newest first, filtered by status, metadata, values and
    ids, sorted and paged."""
    found = await _matching(body, ctx, user)
    if body.ids is not None:
        wanted = set(body.ids)
        found = [s for s in found if s.thread_id in wanted]
    if body.sort_by is not None:
        found.sort(key=_SORT_KEYS[body.sort_by], reverse=body.sort_order == "desc")
    return await offload.to_thread(_shown, ctx, found[body.offset:body.offset + body.limit])


def _shown(ctx: ApiContext, sessions: list[Session]) -> list[dict[str, Any]]:
    """Threads shaped as ``GET /threads/{id}`` shows them, in one trip to a thread: with their
    values, plain interrupts' whole values and when they last changed (a thread of a graph not
    registered here shows none) and their newest run's config."""
    registered, shaped = set(ctx.manager.graphs.names()), []
    for session in sessions:
        if session.graph not in registered:
            shaped.append(shapes.thread(session))
            continue
        try:
            values, changed = ctx.manager.values_at(session.thread_id)
            shown = interrupts.payloads(ctx.manager, session)
        except UnknownSessionError:  # deleted since it was listed
            continue
        newest = next(iter(ctx.runs.of_thread(session.thread_id, limit=1)), None)
        shaped.append(shapes.thread(session, values, shown, config=shapes.thread_config(newest),
                                    state_updated_at=changed))
    return shaped


_SORT_KEYS: dict[str, Callable[[Session], Any]] = {
    "thread_id": lambda s: s.thread_id, "created_at": lambda s: s.created_at,
    "updated_at": lambda s: s.updated_at, "status": lambda s: shapes.thread(s)["status"]}
"""How a search's ``sort_by`` orders the threads (``status``: by LangGraph's status word)."""


@router.post("/count")
async def count_threads(body: ThreadCount, ctx: Context, user: Caller) -> int:
    """How many threads a search with the same filters finds."""
    return len(await _matching(body, ctx, user))


async def _matching(body: ThreadCount, ctx: Context, user: User | None) -> list[Session]:
    """The sessions of the threads ``body`` chooses that ``user`` may read, newest first (shaped by
    the caller, a page only)."""
    if body.status is not None and body.status not in _SEARCH_STATUS and body.status not in STATUSES:
        raise ApiProblem(422, f"unknown thread status {body.status!r}",
                         hint=f"use one of: {', '.join([*_SEARCH_STATUS, *STATUSES])}")
    wanted = _SEARCH_STATUS.get(body.status or "", (body.status,) if body.status else None)
    sessions = access.readable(user, await offload.to_thread(ctx.manager.list))
    chosen = [s for s in sessions if (wanted is None or s.status in wanted)
              and shapes.holds_metadata(shapes.thread_metadata(s), body.metadata)]
    if body.values is None:
        return chosen
    return await offload.to_thread(_holding_values, ctx.manager, chosen, body.values)


def _holding_values(manager: SessionManager, sessions: list[Session],
                    values: dict[str, Any]) -> list[Session]:
    """The ``sessions`` whose current state contains ``values`` (in one trip to a thread); a thread
    whose graph is not registered here has no state to read, so it matches nothing."""
    graphs = set(manager.graphs.names())
    return [s for s in sessions if s.graph in graphs
            and metadata.contains(json_value(manager.values(s.thread_id)), values)]


@router.get("/{thread_id}", dependencies=[ReadableThread])
async def get_thread(thread_id: str, ctx: Context) -> dict[str, Any]:
    """One thread: its status, metadata, values and open interrupts."""
    session = await offload.to_thread(ctx.manager.get, thread_id)
    shown = await offload.to_thread(_shown, ctx, [session])
    if not shown:  # deleted between the two reads (a stateless run's thread after its grace, say)
        raise UnknownSessionError(thread_id)
    return shown[0]


@router.delete("/{thread_id}", status_code=204, dependencies=[ReadableThread])
async def delete_thread(thread_id: str, ctx: Context, user: Caller) -> Response:
    """Delete the thread (409 while a run of it is pending or in flight) and its runs' live logs."""
    if user is not None:
        require_delete(user, await offload.to_thread(ctx.manager.get, thread_id))
    await offload.to_thread(refuse_running, ctx, thread_id, "delete the thread")
    await offload.to_thread(ctx.manager.delete, thread_id)
    await offload.to_thread(ctx.runs.forget_live, thread_id)  # its runs' live logs go with it
    return Response(status_code=204)


@router.get("/{thread_id}/state", dependencies=[ReadableThread])
async def get_state(thread_id: str, ctx: Context) -> dict[str, Any]:
    """The thread's current state: its values, next nodes, checkpoint and open interrupts."""
    session = await offload.to_thread(ctx.manager.get, thread_id)
    try:
        history = await offload.to_thread(ctx.manager.history, thread_id, limit=1)
    except ValidationError:  # a stored state its graph's state model no longer fits: shown as stored
        return shapes.stored_state(await offload.to_thread(ctx.manager.values, thread_id), session)
    payloads = await interrupts.apayloads(ctx.manager, session)
    if not history:
        return shapes.stored_state({}, session, payloads)
    return shapes.state(history[0], session, payloads)


@router.get("/{thread_id}/state/{checkpoint_id}", dependencies=[ReadableThread])
async def get_state_at(thread_id: str, checkpoint_id: str, ctx: Context) -> dict[str, Any]:
    """The thread's state at one of its checkpoints."""
    snapshot = await offload.to_thread(ctx.manager.state_at, thread_id, checkpoint_id)
    return shapes.state(snapshot)


@router.post("/{thread_id}/state/checkpoint", dependencies=[ReadableThread])
async def post_state_at(thread_id: str, body: StateAtCheckpoint, ctx: Context) -> dict[str, Any]:
    """The thread's state at the checkpoint the body names (its current state if it names none)."""
    checkpoint_id = body.checkpoint.of(thread_id)
    if checkpoint_id is None:
        return await get_state(thread_id, ctx)
    snapshot = await offload.to_thread(ctx.manager.state_at, thread_id, checkpoint_id)
    return shapes.state(snapshot)


@router.post("/{thread_id}/history", dependencies=[ReadableThread])
async def get_history(thread_id: str, ctx: Context, body: HistoryQuery | None = None) -> list[dict[str, Any]]:
    """The thread's past states, newest first, filtered by checkpoint metadata, paged by
    ``before`` and ``limit``."""
    query = body or HistoryQuery()
    start = query.start_id(thread_id)
    first = [await offload.to_thread(ctx.manager.state_at, thread_id, start)] if start is not None else []
    first = [snapshot for snapshot in first if query.metadata is None
             or query.metadata.items() <= dict(snapshot.metadata or {}).items()]
    rest = query.limit - len(first)
    history = await offload.to_thread(ctx.manager.history, thread_id, limit=rest, metadata=query.metadata,
                                      before=start or query.before_id(thread_id)) if rest else []
    return [shapes.state(snapshot) for snapshot in [*first, *history]]


@router.post("/{thread_id}/events", dependencies=[ReadableThread])
async def post_event(thread_id: str, body: EventPost, ctx: Context, user: Caller) -> dict[str, Any]:
    """Tell the thread something (an event of ``kind`` with a payload), delivered at its next turn."""
    require_run(user, (await offload.to_thread(ctx.manager.get, thread_id)).graph)
    event = await offload.to_thread(ctx.manager.post_event, thread_id, body.kind, body.payload)
    return {"event_id": event.event_id, "thread_id": thread_id, "kind": event.kind,
            "delivered": "at the thread's next turn"}


@router.get("/{thread_id}/trace", dependencies=[ReadableThread])
async def get_trace(thread_id: str, ctx: Context) -> Response:
    """The thread's audit trail as newline-delimited JSON, one entry a line."""
    body = await offload.to_thread(trail_ndjson, ctx.manager, thread_id)
    return Response(body, media_type="application/x-ndjson")
