"""Runs: a turn of a thread's registered graph, started in the background, waited on, or streamed.

A request names a registered graph (``assistant_id``) and gives input for its state, or answers
the thread's open approval with ``command: {"resume": ...}``; it can never describe a graph or a
node. It may carry a ``budget`` within the operator's ceiling (``grapharc.server.api.budgets``).
The resume value is ``"approved"`` / ``"rejected"`` or an object
``{"decision": ..., "decider": ..., "approval_id": ...}``; who may decide is checked as the inbox
checks it, and the run's turn records the decision and carries the thread on as the inbox's
decision does (``grapharc.server.service.decisions``).

A run is a durable record in the run store (``grapharc.runs``), queued for whichever worker's loop
claims it first (``grapharc.server.api.worker``): its id, status, join and stream work on every
``grapharc serve`` process over the same stores, and after a restart.
"""

from __future__ import annotations

import uuid
from functools import partial
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Query
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from sse_starlette.sse import EventSourceResponse

from grapharc.runs.records import DELETE, KEEP, ON_COMPLETION, REJECT, RunRecord
from grapharc.server.api import shapes
from grapharc.server.api.budgets import BudgetRequest, run_budget
from grapharc.server.api.context import ApiContext, api
from grapharc.server.api.guards import Caller, ReadableOrNewThread, ReadableThread, require_run
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.state_writes import checkpoint_named, fork_request
from grapharc.server.api.streaming import cursor_of, sse_response, stream_modes, wait_for_progress
from grapharc.server.api.threads import CheckpointRef
from grapharc.server.auth import User
from grapharc.server.service import decisions
from grapharc.session.errors import UnknownSessionError
from grapharc.session.records import DECISIONS, OPEN, PAUSED, Approval, Session
from grapharc.stores import offload

router = APIRouter(prefix="/threads/{thread_id}/runs", tags=["runs"])
Context = Annotated[ApiContext, Depends(api)]
LastEventId = Annotated[str | None, Header(alias="Last-Event-ID")]


class ResumeCommand(BaseModel):
    """``command``: only ``resume`` (the answer to the thread's open approval)."""

    model_config = ConfigDict(extra="forbid")
    resume: str | dict[str, Any]


class RunCreate(BaseModel):
    """The body of every run-starting route; fields the SDK sends that would change the graph are refused."""

    model_config = ConfigDict(extra="forbid")
    assistant_id: str = Field(min_length=1)
    input: dict[str, Any] | None = None
    command: ResumeCommand | None = None
    stream_mode: str | list[str] = "values"
    stream_subgraphs: Literal[False] = False
    stream_resumable: bool = False
    metadata: dict[str, Any] | None = None
    multitask_strategy: Literal["reject", "enqueue"] = "reject"
    on_disconnect: Literal["cancel", "continue"] = "continue"
    if_not_exists: Literal["reject", "create"] = "reject"
    budget: BudgetRequest | None = None
    checkpoint_id: str | None = Field(default=None, min_length=1, max_length=200)  # a fork (state_writes)
    checkpoint: CheckpointRef | None = None


@router.post("", dependencies=[ReadableOrNewThread])
async def create_run(thread_id: str, body: RunCreate, ctx: Context, user: Caller) -> dict[str, Any]:
    return shapes.run(await queue(ctx, thread_id, body, user))


@router.post("/wait", dependencies=[ReadableOrNewThread])
async def wait_run(thread_id: str, body: RunCreate, ctx: Context, user: Caller) -> dict[str, Any]:
    await ended(ctx, await queue(ctx, thread_id, body, user))
    return await final_values(ctx, thread_id)


@router.post("/stream", dependencies=[ReadableOrNewThread])
async def stream_run(thread_id: str, body: RunCreate, ctx: Context, user: Caller) -> EventSourceResponse:
    modes = stream_modes(body.stream_mode)
    run = await queue(ctx, thread_id, body, user)
    return sse_response(ctx, run, modes, None, cancel_on_disconnect=body.on_disconnect == "cancel")


RunStatusFilter = Literal["pending", "running", "success", "error", "interrupted", "timeout"]


@router.get("", dependencies=[ReadableThread])
async def list_runs(thread_id: str, ctx: Context,
                    limit: Annotated[int, Query(ge=1, le=1000)] = 10,
                    offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
                    status: RunStatusFilter | None = None,
                    select: Annotated[list[str] | None, Query()] = None) -> list[dict[str, Any]]:
    """The thread's runs, newest first (``status`` filters; ``select`` keeps only those fields),
    as the SDK's ``runs.list`` asks; an unknown thread is a 404."""
    await offload.to_thread(ctx.manager.get, thread_id)
    runs = await offload.to_thread(partial(ctx.runs.of_thread, thread_id, status=status, limit=limit,
                                           offset=offset))
    page = [shapes.run(run) for run in runs]
    if not select:
        return page
    unknown = sorted(set(select) - set(shapes.RUN_FIELDS))
    if unknown:
        raise ApiProblem(422, f"select names no run field: {', '.join(unknown)}",
                         hint=f"the fields are {', '.join(shapes.RUN_FIELDS)}")
    return [{name: run[name] for name in select} for run in page]


@router.get("/{run_id}", dependencies=[ReadableThread])
async def get_run(thread_id: str, run_id: str, ctx: Context) -> dict[str, Any]:
    return shapes.run(await offload.to_thread(ctx.runs.get, thread_id, run_id))


@router.post("/{run_id}/cancel", dependencies=[ReadableThread])
async def cancel_run(thread_id: str, run_id: str, ctx: Context, user: Caller,
                     wait: bool = False) -> dict[str, Any]:
    """Cancel a run wherever it executes: a queued one at once, a running one at its worker's next
    poll (``wait``: answer once it has ended); a caller who may run its assistant may."""
    if user is not None:
        require_run(user, (await offload.to_thread(ctx.runs.get, thread_id, run_id)).assistant_id)
    run = await offload.to_thread(ctx.runs.request_cancel, thread_id, run_id, ctx.manager.clock())
    ctx.worker.wake()
    if wait:
        run = await ended(ctx, run)
    return shapes.run(run)


@router.get("/{run_id}/join", dependencies=[ReadableThread])
async def join_run(thread_id: str, run_id: str, ctx: Context) -> dict[str, Any]:
    await ended(ctx, await offload.to_thread(ctx.runs.get, thread_id, run_id))
    return await final_values(ctx, thread_id)


@router.get("/{run_id}/stream", dependencies=[ReadableThread])
async def join_stream(thread_id: str, run_id: str, ctx: Context, last_event_id: LastEventId = None,
                      stream_mode: Annotated[list[str] | None, Query()] = None,
                      cancel_on_disconnect: bool = False) -> EventSourceResponse:
    """Rejoin a run's stream (the run's own modes unless ``stream_mode`` names some)."""
    run = await offload.to_thread(ctx.runs.get, thread_id, run_id)
    modes = stream_modes(stream_mode or list(run.stream_modes))
    return sse_response(ctx, run, modes, cursor_of(last_event_id), cancel_on_disconnect=cancel_on_disconnect)


async def ended(ctx: ApiContext, run: RunRecord) -> RunRecord:
    """The run's record once it has ended, on whichever worker executes it."""
    while not run.ended:
        woken = ctx.progress.changed(run.thread_id)
        run = await offload.to_thread(ctx.runs.get, run.thread_id, run.run_id)
        if not run.ended:
            await wait_for_progress(ctx.manager, run, ctx.worker.name, woken)
    return run


async def final_values(ctx: ApiContext, thread_id: str) -> dict[str, Any]:
    """The thread's values once the run ended, with its open approvals as ``__interrupt__``."""
    session = await offload.to_thread(ctx.manager.get, thread_id)
    values = await offload.to_thread(ctx.manager.values, thread_id)
    pending = shapes.interrupts(session)
    return {**shapes.thread(session, values)["values"], **({"__interrupt__": pending} if pending else {})}


async def queue(ctx: ApiContext, thread_id: str, body: RunCreate, user: User | None, *,
                on_completion: str = KEEP) -> RunRecord:
    """Check the request against the thread and its graph, then queue the run durably for a worker:
    ``reject`` refuses it (409) while another run of the thread is pending or running or a runner
    holds its lease; ``enqueue`` queues it behind them. ``on_completion`` ``delete``: the worker
    deletes the thread once the run has ended (a stateless run's, ``grapharc.server.api.stateless``)."""
    graph = ctx.manager.graphs.get(body.assistant_id)
    if body.command is None:
        require_run(user, graph.name)
    session = await _thread(ctx, thread_id, body, user)
    if session.graph != graph.name:
        raise ApiProblem(409, f"thread {thread_id} runs graph {session.graph!r}, not {graph.name!r}",
                         hint=f"use assistant_id {session.graph!r} for this thread")
    exclusive = body.multitask_strategy == REJECT
    if exclusive and session.lease_live(ctx.manager.clock()):
        raise ApiProblem(409, f"thread {thread_id} is busy: runner {session.runner} holds its lease",
                         hint="wait for that turn to end, or send multitask_strategy 'enqueue'")
    now = ctx.manager.clock()
    request = _request(ctx, session, body, user, queued=not exclusive)
    if on_completion == DELETE:
        request[ON_COMPLETION] = DELETE
    run = RunRecord(run_id=str(uuid.uuid4()), thread_id=thread_id, assistant_id=graph.name,
                    request=request, created_at=now,
                    updated_at=now, stream_modes=tuple(stream_modes(body.stream_mode)),
                    budget=run_budget(body.budget, ctx.ceiling), multitask_strategy=body.multitask_strategy,
                    metadata=body.metadata or {})
    added = await offload.to_thread(ctx.runs.add, run, exclusive=exclusive)
    ctx.worker.wake()
    return added


async def _thread(ctx: ApiContext, thread_id: str, body: RunCreate, user: User | None) -> Session:
    """The run's thread (the guard let only a thread the caller may read through), created for
    ``user`` when the request asks for it and it does not exist (unless it names a checkpoint)."""
    try:
        return await offload.to_thread(ctx.manager.get, thread_id)
    except UnknownSessionError:
        if body.if_not_exists != "create" or body.checkpoint_id is not None or body.checkpoint is not None:
            raise  # a thread made now would have no checkpoint to fork from
    return await offload.to_thread(partial(ctx.manager.create, body.assistant_id, thread_id=thread_id,
                                           owner=user.name if user else None,
                                           tenant=user.tenant if user else None))


def _request(ctx: ApiContext, session: Session, body: RunCreate, user: User | None, *,
             queued: bool) -> dict[str, Any]:
    """What the run's turn will do, checked now: a resume answering the thread's open approval (who
    decides settled now), a fork from a checkpoint the thread has, or a start with input checked
    against the graph's state. A start queued behind other runs may find the thread paused when its
    turn comes; that run then ends in error."""
    if body.command is not None:
        if body.checkpoint_id is not None or body.checkpoint is not None:
            raise ApiProblem(422, "a resume answers the thread's open approval where it waits; it takes "
                                  "no checkpoint", hint="leave checkpoint out, or start a run from it")
        if body.input is not None:
            raise ApiProblem(422, "a run takes input or command, not both",
                             hint="send command.resume to answer an approval, input to start a turn")
        approval, decision, decider = _answer(session, body.command.resume, ctx.manager.clock(), user)
        return {"kind": "resume", "approval_id": approval.approval_id, "decision": decision,
                "decider": decider}
    if (forked := checkpoint_named(session.thread_id, body.checkpoint_id, body.checkpoint)) is not None:
        _check_input(ctx, session.graph, body.input or {})
        return fork_request(ctx, session.thread_id, forked, body.input, user)
    if session.status == PAUSED and not queued:
        waiting = ", ".join(h.approval_id for h in session.holds if h.state == OPEN)
        raise ApiProblem(409, f"thread {session.thread_id} waits on approval {waiting}",
                         hint='answer it with a run whose command is {"resume": "approved"} or "rejected"')
    _check_input(ctx, session.graph, body.input or {})
    return {"kind": "start", "input": body.input or {}}


def _answer(session: Session, resume: str | dict[str, Any], now: float,
            user: User | None) -> tuple[Approval, str, str]:
    """The approval a resume answers, the decision and who decides (the token's user when the server
    has an auth file, else the ``decider`` named; ``decisions.decider`` says whether they may),
    checked before anything is written."""
    answer = {"decision": resume} if isinstance(resume, str) else dict(resume)
    unknown = sorted(set(answer) - {"decision", "decider", "approval_id"})
    decision, decider = answer.get("decision"), answer.get("decider", "api")
    if unknown or decision not in DECISIONS or not isinstance(decider, str):
        raise ApiProblem(422, f"command.resume must be {' or '.join(DECISIONS)}, or an object with "
                              f"decision, decider and approval_id; got {resume!r}",
                         hint='e.g. {"resume": {"decision": "approved", "decider": "credit-desk"}}')
    open_holds = [h for h in session.holds if h.state == OPEN]
    wanted = answer.get("approval_id")
    chosen = [h for h in open_holds if wanted is None or h.approval_id == wanted]
    if len(chosen) != 1:
        which = f"approval {wanted}" if wanted else "exactly one open approval"
        raise ApiProblem(409, f"thread {session.thread_id} does not wait on {which} "
                              f"(open: {', '.join(h.approval_id for h in open_holds) or 'none'})",
                         hint="name the approval_id in command.resume, or read GET /threads/{id}/state")
    approval = chosen[0]
    if user is not None and "decider" in answer:
        raise ApiProblem(422, "command.resume names a decider, but the bearer token says who decides",
                         hint="leave decider out")
    decider = decisions.decider(approval, session.graph, user, decider)
    if approval.expired(now):
        raise ApiProblem(409, f"approval {approval.approval_id} has expired",
                         hint="the thread cannot be carried on by this approval")
    return approval, str(decision), decider


def _check_input(ctx: ApiContext, graph: str, values: dict[str, Any]) -> None:
    """Input checked field by field against the graph's state model: 422 listing every bad field."""
    fields = ctx.manager.graphs.get(graph).builder.state.model_fields
    errors: list[dict[str, Any]] = []
    for name, value in values.items():
        spec = fields.get(name)
        if spec is None:
            errors.append({"loc": ["input", name], "msg": "not a field of the graph's state",
                           "type": "extra_forbidden"})
            continue
        try:
            TypeAdapter[Any](spec.annotation or Any).validate_python(value, strict=True)
        except ValidationError as exc:
            errors.extend({"loc": ["input", name, *e["loc"]], "msg": e["msg"], "type": e["type"]}
                          for e in exc.errors())
    if errors:
        raise ApiProblem(422, f"the input does not fit the state of graph {graph!r}", errors=errors,
                         hint="fix the fields listed in 'errors'")
