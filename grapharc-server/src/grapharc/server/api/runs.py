"""Runs: a turn of a thread's registered graph, started in the background, waited on, or streamed.

A request names a registered graph (``assistant_id``) and gives input for its state, or answers
the thread's open approval with ``command: {"resume": ...}``; it can never describe a graph or a
node. It may carry a ``budget`` within the operator's ceiling (``grapharc.server.api.budgets``).
The resume value is ``"approved"`` / ``"rejected"`` or an object
``{"decision": ..., "decider": ..., "approval_id": ...}``; the decision is the durable one the
session layer records (who decided, when), and the run carries the thread on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Query
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from sse_starlette.sse import EventSourceResponse

from grapharc.runtime.budget import Budget
from grapharc.server.api import shapes
from grapharc.server.api.budgets import BudgetRequest, run_budget
from grapharc.server.api.context import ApiContext, api, caller
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.runbook import Run
from grapharc.server.api.streaming import cursor_of, sse_response, stream_modes
from grapharc.server.auth import User
from grapharc.session.errors import UnknownSessionError
from grapharc.session.records import DECISIONS, OPEN, PAUSED, Approval, Session

router = APIRouter(prefix="/threads/{thread_id}/runs", tags=["runs"])
Context = Annotated[ApiContext, Depends(api)]
Caller = Annotated[User | None, Depends(caller)]
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


@router.post("")
async def create_run(thread_id: str, body: RunCreate, ctx: Context, user: Caller) -> dict[str, Any]:
    return (await _start(ctx, thread_id, body, user)).to_dict()


@router.post("/wait")
async def wait_run(thread_id: str, body: RunCreate, ctx: Context, user: Caller) -> dict[str, Any]:
    run = await _start(ctx, thread_id, body, user)
    await run.done.wait()
    return await _final_values(ctx, run)


@router.post("/stream")
async def stream_run(thread_id: str, body: RunCreate, ctx: Context, user: Caller) -> EventSourceResponse:
    modes = stream_modes(body.stream_mode)
    run = await _start(ctx, thread_id, body, user)
    return sse_response(ctx.manager, run, modes, cursor_of(None, run),
                        cancel_on_disconnect=body.on_disconnect == "cancel")


@router.get("/{run_id}")
async def get_run(thread_id: str, run_id: str, ctx: Context) -> dict[str, Any]:
    return _run(ctx, thread_id, run_id).to_dict()


@router.post("/{run_id}/cancel")
async def cancel_run(thread_id: str, run_id: str, ctx: Context, wait: bool = False) -> dict[str, Any]:
    run = _run(ctx, thread_id, run_id)
    if run.task is not None and not run.done.is_set():
        run.task.cancel()
        if wait:
            await run.done.wait()
    return run.to_dict()


@router.get("/{run_id}/join")
async def join_run(thread_id: str, run_id: str, ctx: Context) -> dict[str, Any]:
    run = _run(ctx, thread_id, run_id)
    await run.done.wait()
    return await _final_values(ctx, run)


@router.get("/{run_id}/stream")
async def join_stream(thread_id: str, run_id: str, ctx: Context, last_event_id: LastEventId = None,
                      stream_mode: Annotated[list[str] | None, Query()] = None,
                      cancel_on_disconnect: bool = False) -> EventSourceResponse:
    """Rejoin a run's stream (the run's own modes unless ``stream_mode`` names some)."""
    run = _run(ctx, thread_id, run_id)
    modes = stream_modes(stream_mode or run.stream_modes)
    return sse_response(ctx.manager, run, modes, cursor_of(last_event_id, run),
                        cancel_on_disconnect=cancel_on_disconnect)


def _run(ctx: ApiContext, thread_id: str, run_id: str) -> Run:
    run = ctx.runs.get(thread_id, run_id)
    if run is None:
        raise ApiProblem(404, f"thread {thread_id} has no run {run_id} in this server process",
                         hint="run ids live as long as the server process; the thread's trace is durable")
    return run


async def _final_values(ctx: ApiContext, run: Run) -> dict[str, Any]:
    """The thread's values once the run ended, with its open approvals as ``__interrupt__``."""
    session = await asyncio.to_thread(ctx.manager.get, run.thread_id)
    values = await asyncio.to_thread(ctx.manager.values, run.thread_id)
    pending = shapes.interrupts(session)
    return {**shapes.thread(session, values)["values"], **({"__interrupt__": pending} if pending else {})}


async def _start(ctx: ApiContext, thread_id: str, body: RunCreate, user: User | None) -> Run:
    """Check the request against the thread and its graph, then start the run's turn."""
    graph = ctx.manager.graphs.get(body.assistant_id)
    session = await _thread(ctx, thread_id, body)
    if session.graph != graph.name:
        raise ApiProblem(409, f"thread {thread_id} runs graph {session.graph!r}, not {graph.name!r}",
                         hint=f"use assistant_id {session.graph!r} for this thread")
    active = ctx.runs.active(thread_id)
    if active is not None or session.lease_live(ctx.manager.clock()):
        if body.multitask_strategy == "enqueue":
            raise ApiProblem(422, "multitask_strategy 'enqueue' is not offered yet",
                             hint="use 'reject' and start the run once the thread's current run ends")
        holder = f"run {active.run_id}" if active is not None else f"runner {session.runner}"
        raise ApiProblem(409, f"thread {thread_id} is busy: {holder} holds its lease",
                         hint="wait for that run (GET .../join) or cancel it, then start again")
    budget = run_budget(body.budget, ctx.ceiling)
    after_seq = await asyncio.to_thread(_last_seq, ctx, thread_id)
    run = Run(thread_id, graph.name, after_seq, body.multitask_strategy,
              stream_modes(body.stream_mode))
    turn = _turn(ctx, session, body, user, run, budget)
    ctx.runs.start(run, turn, lambda: ctx.manager.get(thread_id).status,
                   lambda: _last_seq(ctx, thread_id))
    return run


def _last_seq(ctx: ApiContext, thread_id: str) -> int:
    trail = ctx.manager.audit(thread_id)
    return trail[-1].seq if trail else 0


async def _thread(ctx: ApiContext, thread_id: str, body: RunCreate) -> Session:
    try:
        return await asyncio.to_thread(ctx.manager.get, thread_id)
    except UnknownSessionError:
        if body.if_not_exists != "create":
            raise
    return await asyncio.to_thread(ctx.manager.create, body.assistant_id, thread_id=thread_id)


def _turn(ctx: ApiContext, session: Session, body: RunCreate, user: User | None,
          run: Run, budget: Budget | None) -> Awaitable[Any]:
    """The session-layer call this run makes, under ``budget``: a resume answering an approval, or a
    start with input; each saved node wakes the run's streams."""
    if body.command is not None:
        if body.input is not None:
            raise ApiProblem(422, "a run takes input or command, not both",
                             hint="send command.resume to answer an approval, input to start a turn")
        approval, decision, decider = _answer(session, body.command.resume, ctx.manager.clock(), user)
        return ctx.manager.aresume(session.thread_id, approval.approval_id, decision, decider=decider,
                                   on_update=run.progressed, budget=budget)
    if session.status == PAUSED:
        waiting = ", ".join(h.approval_id for h in session.holds if h.state == OPEN)
        raise ApiProblem(409, f"thread {session.thread_id} waits on approval {waiting}",
                         hint='answer it with a run whose command is {"resume": "approved"} or "rejected"')
    _check_input(ctx, session.graph, body.input or {})
    return ctx.manager.arun(session.thread_id, body.input or {}, on_update=run.progressed, budget=budget)


def _answer(session: Session, resume: str | dict[str, Any], now: float,
            user: User | None) -> tuple[Approval, str, str]:
    """The approval a resume answers, the decision and who decides (the token's user when the server
    has an auth file, else the ``decider`` named), checked before anything is written."""
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
    if user is not None:
        if "decider" in answer:
            raise ApiProblem(422, "command.resume names a decider, but the bearer token says who decides",
                             hint="leave decider out")
        signed = user.decider_for(session.graph, approval.node, approval.deciders)
        if signed is None:
            raise ApiProblem(403, f"{user.name} may not decide approval {approval.approval_id}",
                             hint="the auth file's may_decide and decides_for say who may")
        decider = signed
    elif approval.deciders and decider not in approval.deciders:
        raise ApiProblem(403, f"{decider!r} may not decide approval {approval.approval_id}",
                         hint=f"it is for: {', '.join(approval.deciders)}")
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
