"""Runs: a turn of a thread's registered graph, started in the background, waited on, or streamed.

A request names a registered graph (``assistant_id``) and gives input for its state, or answers
the thread's open approval with ``command: {"resume": ...}``; it can never describe a graph or a
node. It may carry a ``budget`` within the operator's ceiling (``grapharc.server.api.budgets``), and
a ``config`` and ``context`` the graph declares (``grapharc.server.api.run_config``).
An approval's resume value is ``"approved"`` / ``"rejected"`` or an object
``{"decision": ..., "decider": ..., "approval_id": ...}``, a plain ``interrupt()``'s any JSON value
(``grapharc.server.api.interrupts``); who may decide is checked as the inbox checks it, and the
run's turn records the answers and carries the thread on as the inbox's decision does
(``grapharc.server.service.decisions``). A ``webhook`` URL gets the run's record once it has ended
(``grapharc.server.api.webhooks``).

A run is a durable record in the run store (``grapharc.runs``), queued for whichever worker's loop
claims it first (``grapharc.server.api.worker``): its id, status, join and stream work on every
``grapharc serve`` process over the same stores, and after a restart.
"""

from __future__ import annotations

import uuid
from functools import cache, partial
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from grapharc.runs.errors import UnknownRunError
from grapharc.runs.records import (
    DELETE,
    ERROR,
    INTERRUPT,
    KEEP,
    ON_COMPLETION,
    PENDING,
    REJECT,
    ROLLBACK,
    RUNNING,
    RunRecord,
)
from grapharc.server.api import assistant_lookup, assistant_runs, commands, interrupts, shapes
from grapharc.server.api.budgets import BudgetRequest, run_budget
from grapharc.server.api.context import ApiContext, api, caller_of, context_of
from grapharc.server.api.guards import (
    Caller,
    ReadableOrNewThread,
    ReadableThread,
    asker,
    require_delete,
    require_run,
)
from grapharc.server.api.live import SUBGRAPHS
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.run_config import REQUEST_KEY, RunConfig, caller_config
from grapharc.server.api.run_facts import CREATED_BY, KWARGS_KEY, kept_kwargs
from grapharc.server.api.state_writes import checkpoint_named, fork_request
from grapharc.server.api.streaming import (
    check_cursor,
    cursor_of,
    error_body,
    live_cursor_of,
    sse_response,
    stream_modes,
    wait_for_progress,
)
from grapharc.server.api.threads import CheckpointRef
from grapharc.server.api.worker import CONTINUE
from grapharc.server.auth import User
from grapharc.server.event_stream import EventStream
from grapharc.session.breakpoints import EVERY_NODE
from grapharc.session.errors import UnknownSessionError
from grapharc.session.records import CREATED, OPEN, PAUSED, Session
from grapharc.stores import offload

router = APIRouter(prefix="/threads/{thread_id}/runs", tags=["runs"])
MAX_AFTER_SECONDS = 366 * 24 * 3600.0
"""The longest a run may be put off (``after_seconds``): a year and a day."""
Context = Annotated[ApiContext, Depends(api)]
LastEventId = Annotated[str | None, Header(alias="Last-Event-ID")]


class RunCommand(BaseModel):
    """``command``: ``resume``, the answer to the thread's open interrupts (any JSON value;
    ``grapharc.server.api.interrupts`` checks it; null: none, as in LangGraph), and ``goto`` and
    ``update`` (``grapharc.server.api.commands`` checks them)."""

    model_config = ConfigDict(extra="forbid")
    resume: Any = None
    goto: str | list[str] | None = None
    update: dict[str, Any] | list[tuple[str, Any]] | None = None


class RunCreate(BaseModel):
    """The body of every run-starting route; fields the SDK sends that would change the graph are refused."""

    model_config = ConfigDict(extra="forbid")
    assistant_id: str = Field(min_length=1)
    input: dict[str, Any] | None = None
    command: RunCommand | None = None
    stream_mode: str | list[str] = "values"
    stream_subgraphs: bool = False
    stream_resumable: bool = False
    metadata: dict[str, Any] | None = None
    multitask_strategy: Literal["reject", "enqueue", "interrupt", "rollback"] = "reject"
    on_disconnect: Literal["cancel", "continue"] = "continue"
    if_not_exists: Literal["reject", "create"] = "reject"
    budget: BudgetRequest | None = None
    after_seconds: float | None = Field(default=None, ge=0, le=MAX_AFTER_SECONDS)
    interrupt_before: Literal["*"] | list[str] | None = None
    interrupt_after: Literal["*"] | list[str] | None = None
    config: RunConfig | None = None
    context: dict[str, Any] | None = None
    checkpoint_id: str | None = Field(default=None, min_length=1, max_length=200)  # a fork (state_writes)
    checkpoint: CheckpointRef | None = None
    webhook: str | None = Field(default=None, min_length=1, max_length=2048)  # gets the run once it ends


@router.post("", dependencies=[ReadableOrNewThread])
async def create_run(thread_id: str, body: RunCreate, ctx: Context, user: Caller) -> dict[str, Any]:
    """Queue a run of an assistant on the thread (``if_not_exists: create`` makes the thread): its run
    record, answered at once."""
    return shapes.run(await queue(ctx, thread_id, body, user))


@router.post("/wait", dependencies=[ReadableOrNewThread])
async def wait_run(thread_id: str, body: RunCreate, ctx: Context, user: Caller) -> dict[str, Any]:
    """Queue a run on the thread and wait for it to end: the thread's values then, its open
    approvals as ``__interrupt__``, a failure as ``__error__``."""
    return await final_values(ctx, await ended(ctx, await queue(ctx, thread_id, body, user)))


@router.post("/stream", dependencies=[ReadableOrNewThread])
async def stream_run(thread_id: str, body: RunCreate, request: Request) -> EventStream:
    """Queue a run on the thread and stream it as server-sent events in the ``stream_mode`` modes,
    from ``metadata`` to ``end``."""
    ctx, user = context_of(request), caller_of(request)
    modes = stream_modes(body.stream_mode)
    queued = ctx.progress.changed(thread_id)  # before the run is added: the run's beginning sets it
    run = await queue(ctx, thread_id, body, user)
    return sse_response(ctx, run, modes, None, cancel_on_disconnect=body.on_disconnect == "cancel",
                        queued=queued)


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
    """One run's record: its status, assistant, metadata and times."""
    return shapes.run(await offload.to_thread(ctx.runs.get, thread_id, run_id))


@router.post("/{run_id}/cancel", dependencies=[ReadableThread])
async def cancel_run(thread_id: str, run_id: str, ctx: Context, user: Caller, wait: bool = False,
                     action: Literal["interrupt", "rollback"] = INTERRUPT) -> Response:
    """Cancel a run wherever it executes: a queued one at once, a running one at its worker's next
    poll, its thread left where its last checkpoint stands (``wait``: answer once it has ended); a
    caller who may run its assistant may. ``rollback`` also discards the checkpoints the run wrote
    and deletes the run (a 204 once it is gone, with ``wait``)."""
    if user is not None:
        require_run(user, (await offload.to_thread(ctx.runs.get, thread_id, run_id)).assistant_id)
    run = await offload.to_thread(partial(ctx.runs.request_cancel, thread_id, run_id, ctx.manager.clock(),
                                          by=asker(user), action=action))
    ctx.worker.wake()
    if wait:
        try:
            run = await ended(ctx, run)
        except UnknownRunError:  # rolled back: deleted once its turn ended
            return Response(status_code=204)
    return JSONResponse(shapes.run(run))


@router.delete("/{run_id}", status_code=204, dependencies=[ReadableThread])
async def delete_run(thread_id: str, run_id: str, ctx: Context, user: Caller) -> Response:
    """Delete an ended run's record (409 while it is pending or running; the thread's audit trail
    keeps its entries); a caller who may delete the thread may."""
    if user is not None:
        require_delete(user, await offload.to_thread(ctx.manager.get, thread_id))
    await offload.to_thread(ctx.runs.delete, thread_id, run_id)
    return Response(status_code=204)


@router.get("/{run_id}/join", dependencies=[ReadableThread])
async def join_run(thread_id: str, run_id: str, ctx: Context) -> dict[str, Any]:
    """Wait for a run to end: the thread's values then, as ``/wait`` answers."""
    return await final_values(ctx, await ended(ctx, await offload.to_thread(ctx.runs.get, thread_id, run_id)))


@router.get("/{run_id}/stream", dependencies=[ReadableThread])
async def join_stream(thread_id: str, run_id: str, ctx: Context, last_event_id: LastEventId = None,
                      stream_mode: Annotated[list[str] | None, Query()] = None,
                      cancel_on_disconnect: bool = False) -> EventStream:
    """Rejoin a run's stream (the run's own modes unless ``stream_mode`` names some) after
    ``Last-Event-ID``, which must be an id this run's stream sent."""
    run = await offload.to_thread(ctx.runs.get, thread_id, run_id)
    modes = stream_modes(stream_mode or [], default=run.stream_modes)
    cursor = cursor_of(last_event_id)
    if cursor is not None:
        await offload.to_thread(check_cursor, ctx.manager, run, cursor, last_event_id or "")
    return sse_response(ctx, run, modes, cursor, cancel_on_disconnect=cancel_on_disconnect,
                        live_after=live_cursor_of(last_event_id))


async def ended(ctx: ApiContext, run: RunRecord) -> RunRecord:
    """The run's record once it has ended, on whichever worker executes it."""
    while not run.ended:
        woken = ctx.progress.changed(run.thread_id)
        run = await offload.to_thread(ctx.runs.get, run.thread_id, run.run_id)
        if not run.ended:
            await wait_for_progress(ctx.manager, run, ctx.worker.name, woken)
    return run


async def final_values(ctx: ApiContext, run: RunRecord) -> dict[str, Any]:
    """What waiting on or joining an ended run answers: the thread's values, with its open approvals
    as ``__interrupt__``; for a failed run, as LangGraph's server answers, ``{"__error__": {"error":
    type name, "message": ...}}`` (the SDK's ``runs.wait`` raises it)."""
    if run.status == ERROR:
        return {"__error__": error_body(run.error)}
    thread_id = run.thread_id
    session = await offload.to_thread(ctx.manager.get, thread_id)
    values = await offload.to_thread(ctx.manager.values, thread_id)
    pending = shapes.interrupts(session, await interrupts.apayloads(ctx.manager, session))
    return {**shapes.thread(session, values)["values"], **({"__interrupt__": pending} if pending else {})}


async def queue(ctx: ApiContext, thread_id: str, body: RunCreate, user: User | None, *,
                on_completion: str = KEEP) -> RunRecord:
    """Check the request against the thread and its graph, then queue the run durably for a worker:
    ``reject`` refuses it (409) while another run of the thread is pending or running or a runner
    holds its lease; ``enqueue`` queues it behind them; ``interrupt`` and ``rollback`` queue it and
    cancel them with that action (LangGraph's double texting), so it runs once they have ended.
    ``on_completion`` ``delete``: the worker deletes the thread once the run has ended (a stateless
    run's, ``grapharc.server.api.stateless``)."""
    body = await assistant_runs.resolved(ctx, body, user)
    webhook = await ctx.webhooks.checked(body.webhook)
    graph = ctx.manager.graphs.get(body.assistant_id)
    if body.command is None:
        require_run(user, graph.name)
    caller = caller_config(graph.builder, body.config, body.context)
    session = await _thread(ctx, thread_id, body, user)
    if session.graph != graph.name:
        raise ApiProblem(409, f"thread {thread_id} runs graph {session.graph!r}, not {graph.name!r}",
                         hint=f"use assistant_id {session.graph!r} for this thread")
    exclusive = body.multitask_strategy == REJECT
    if exclusive and session.lease_live(ctx.manager.clock()):
        raise ApiProblem(409, f"thread {thread_id} is busy: runner {session.runner} holds its lease",
                         hint="wait for that turn to end, or send multitask_strategy 'enqueue'")
    now = ctx.manager.clock()
    request = {**_request(ctx, session, body, user, queued=not exclusive), REQUEST_KEY: caller.to_json(),
               KWARGS_KEY: kept_kwargs(body), **({CREATED_BY: user.name} if user is not None else {})}
    if request["kind"] == "start" and session.status != CREATED:
        await _check_required(ctx, session, request["input"])
    if on_completion == DELETE:
        request[ON_COMPLETION] = DELETE
    if body.stream_subgraphs:
        request[SUBGRAPHS] = True
    run = RunRecord(run_id=str(uuid.uuid4()), thread_id=thread_id, assistant_id=graph.name,
                    request=request, created_at=now,
                    updated_at=now, stream_modes=tuple(stream_modes(body.stream_mode)),
                    budget=run_budget(body.budget, ctx.ceiling), multitask_strategy=body.multitask_strategy,
                    metadata=body.metadata or {},
                    not_before=None if body.after_seconds is None else now + body.after_seconds)
    added = await offload.nearby(ctx.webhooks.stores(webhook),
                                 partial(ctx.webhooks.add_run, run, webhook, exclusive=exclusive))
    if body.multitask_strategy in (INTERRUPT, ROLLBACK):
        await offload.nearby((ctx.runs,), _cancel_before, ctx, added, asker(user))
    ctx.worker.wake(runnable=exclusive and run.not_before is None)  # alone on its thread, and due
    return added


def _cancel_before(ctx: ApiContext, run: RunRecord, by: str) -> None:
    """Cancel, with ``run``'s multitask strategy as the action, every run of its thread queued or
    running before it."""
    now = ctx.manager.clock()
    for earlier in (*ctx.runs.of_thread(run.thread_id, status=RUNNING),
                    *ctx.runs.of_thread(run.thread_id, status=PENDING)):
        if earlier.seq < run.seq:
            ctx.runs.request_cancel(run.thread_id, earlier.run_id, now, by=by, action=run.multitask_strategy)


async def _thread(ctx: ApiContext, thread_id: str, body: RunCreate, user: User | None) -> Session:
    """The run's thread (the guard let only a thread the caller may read through), created for
    ``user`` when the request asks for it and it does not exist (unless it names a checkpoint)."""
    try:
        return await offload.nearby((ctx.manager,), ctx.manager.get, thread_id)
    except UnknownSessionError:
        if body.if_not_exists != "create" or body.checkpoint_id is not None or body.checkpoint is not None:
            raise  # a thread made now would have no checkpoint to fork from
    if body.command is None:  # refused before the thread is created: a refusal leaves nothing behind
        check_input(ctx, body.assistant_id, body.input or {}, {})
    return await offload.nearby((ctx.manager,), partial(ctx.manager.create, body.assistant_id,
                                thread_id=thread_id, owner=user.name if user else None,
                                tenant=user.tenant if user else None))


def _request(ctx: ApiContext, session: Session, body: RunCreate, user: User | None, *,
             queued: bool) -> dict[str, Any]:
    """What the run's turn will do, checked now, with the breakpoints it stops at: a resume
    answering the thread's open interrupts (who answers settled now), a fork from a checkpoint the
    thread has, a continue of a thread a breakpoint stopped (no input, or a resume), or a start with
    input checked against the graph's state. A start queued behind other runs may find the thread
    paused when its turn comes; that run then ends in error."""
    stopped = session.status == PAUSED and not any(h.state == OPEN for h in session.holds)
    return {**_turn_request(ctx, session, body, user, queued=queued, stopped=stopped),
            **_breakpoints(ctx, session.graph, body)}


def _turn_request(ctx: ApiContext, session: Session, body: RunCreate, user: User | None, *,
                  queued: bool, stopped: bool) -> dict[str, Any]:
    """The kind of turn ``_request`` describes, with any goto and update (``stopped``: the thread
    paused on no approval, where a breakpoint stopped it)."""
    if body.command is not None and body.input is not None:
        raise ApiProblem(422, "a run takes input or command, not both",
                         hint="send command.resume to answer an approval, input to start a turn")
    forked = checkpoint_named(session.thread_id, body.checkpoint_id, body.checkpoint)
    if body.command is not None and forked is not None:
        raise ApiProblem(422, "a resume answers the thread's open approval where it waits; it takes "
                              "no checkpoint", hint="leave checkpoint out, or start a run from it")
    if forked is not None:
        check_input(ctx, session.graph, body.input or {})
        return fork_request(ctx, session.thread_id, forked, body.input, user)
    command = body.command
    directed = {} if command is None else commands.directive(ctx.manager, session, command.goto,
                                                             command.update, user)
    if stopped and body.input is None:
        require_run(user, session.graph)  # a command's resume, which answers nothing here, did not check
        return {"kind": CONTINUE, **directed}
    if command is not None:
        if command.resume is None and not directed:
            raise ApiProblem(422, "a command needs resume, goto or update",
                             hint='e.g. {"resume": "approved"}')
        if command.resume is None:
            raise ApiProblem(409, f"thread {session.thread_id} is {session.status}: a goto or "
                                  "update applies to a thread stopped at a breakpoint, or with the answers "
                                  "to its interrupts", hint="send command.resume with the goto or update")
        given = interrupts.answers(ctx.manager, session, command.resume, ctx.manager.clock(), user)
        if directed and len(given) < sum(h.state == OPEN for h in session.holds):
            raise ApiProblem(409, f"thread {session.thread_id} waits on interrupts the command does not "
                                  "answer: a goto or update applies only with the answers that carry it on",
                             hint="answer every open interrupt in command.resume (a map of id to value)")
        return {"kind": "resume", "answers": given, **directed}
    if stopped and not queued:
        raise ApiProblem(409, f"thread {session.thread_id} stopped at a breakpoint",
                         hint="carry it on with a run whose input is null")
    if session.status == PAUSED and not queued:
        waiting = ", ".join(h.approval_id for h in session.holds if h.state == OPEN)
        raise ApiProblem(409, f"thread {session.thread_id} waits on approval {waiting}",
                         hint=f"answer it with a run whose command is "
                              f"{interrupts.resume_example(ctx.manager, session, user)} "
                              "(a decision is approved or rejected)")
    check_input(ctx, session.graph, body.input or {}, {} if session.status == CREATED else None)
    return {"kind": "start", "input": body.input or {}}


def _breakpoints(ctx: ApiContext, graph: str, body: RunCreate) -> dict[str, Any]:
    """The run's ``interrupt_before`` / ``interrupt_after``, each node checked against the graph
    ("*": every node): ``{"breakpoints": {"before": [...], "after": [...]}}``, or nothing."""
    asked = {"before": body.interrupt_before, "after": body.interrupt_after}
    if not any(asked.values()):
        return {}
    nodes = ctx.manager.graphs.get(graph).builder.nodes
    named = {where: [EVERY_NODE] if names == EVERY_NODE else list(names or [])
             for where, names in asked.items()}
    unknown = sorted({n for names in named.values() for n in names} - {*nodes, EVERY_NODE})
    if unknown:
        raise ApiProblem(422, f"interrupt_before/interrupt_after name nodes graph {graph!r} does not have: "
                              f"{', '.join(unknown)}", hint=f"its nodes: {', '.join(sorted(nodes))}; or '*'")
    return {"breakpoints": named}


def check_start(ctx: ApiContext, body: RunCreate, user: User | None) -> None:
    """Refuse, before anything is written, a run starting a turn that ``queue`` would refuse on any
    new thread: an unknown graph or one ``user`` may not run, a stream mode or budget out of bounds,
    input that does not fit the graph's state (a batch checks every run before it queues one)."""
    graph = assistant_lookup.graph_of(ctx, body.assistant_id, user)
    require_run(user, graph.name)
    stream_modes(body.stream_mode)
    run_budget(body.budget, ctx.ceiling)
    check_input(ctx, graph.name, body.input or {}, {})


async def _check_required(ctx: ApiContext, session: Session, values: dict[str, Any]) -> None:
    """A start on a thread that has run before: a required field the input lacks may be in the
    thread's values (read only then), and is refused if it is not (``check_input``)."""
    fields = ctx.manager.graphs.get(session.graph).builder.state.model_fields
    if any(spec.is_required() and name not in values for name, spec in fields.items()):
        current = await offload.to_thread(ctx.manager.values, session.thread_id)
        check_input(ctx, session.graph, values, current)


def check_input(ctx: ApiContext, graph: str, values: dict[str, Any],
                 current: dict[str, Any] | None = None) -> None:
    """Input checked field by field against the graph's state model: 422 listing every bad field,
    and, unless ``current`` (the thread's values) is None, every required field (one without a
    default) neither in the input nor in ``current``: a start without one would leave a thread
    whose first node LangGraph cannot give its input to."""
    state = ctx.manager.graphs.get(graph).builder.state
    fields = state.model_fields
    errors: list[dict[str, Any]] = [] if current is None else [
        {"loc": ["input", name], "msg": "Field required (the thread has no value for it)", "type": "missing"}
        for name, spec in fields.items() if spec.is_required() and name not in values and name not in current]
    for name, value in values.items():
        spec = fields.get(name)
        if spec is None:
            errors.append({"loc": ["input", name], "msg": "not a field of the graph's state",
                           "type": "extra_forbidden"})
            continue
        try:
            _input_adapter(state, name).validate_python(value, strict=True)
        except ValidationError as exc:
            errors.extend({"loc": ["input", name, *e["loc"]], "msg": e["msg"], "type": e["type"]}
                          for e in exc.errors())
        except (TypeError, ValueError) as exc:  # a type's own validator that raises, not pydantic's error
            errors.append({"loc": ["input", name], "msg": str(exc), "type": "invalid"})
    if errors:
        named = ", ".join(dict.fromkeys(str(e["loc"][1]) for e in errors))
        raise ApiProblem(422, f"the input does not fit the state of graph {graph!r} (fields: {named})",
                         errors=errors, hint="fix the fields listed in 'errors'")


@cache
def _input_adapter(state: type[BaseModel], name: str) -> TypeAdapter[Any]:
    """The strict check of run input for field ``name`` of the graph state ``state``, built once per
    state and field: building a TypeAdapter costs more than the check it makes (0.6 ms for a list of
    messages, against microseconds to validate one), and a registered graph's state does not change.
    A type pydantic cannot build an adapter for raises each time, as it did uncached."""
    return TypeAdapter[Any](state.model_fields[name].annotation or Any)
