"""The run a schedule starts: checked as a run when the schedule is made, queued as one when it fires.

A schedule keeps the body of its run as a run-starting request takes it (``payload``). Making
the schedule checks that body as run creation would (its assistant, who may run it, stream
modes, budget within the server's ceiling, config and input against the graph; a thread-bound
schedule's thread and graph), so a schedule whose run would be refused is refused with the run's
message. Each slot queues the run through the same call ``POST /threads/{id}/runs`` and
``POST /runs`` make (``runs.queue``, ``stateless.queue_on_new_thread``), as the schedule's creator,
with ``cron_id`` and ``cron_slot`` added to its metadata. A thread-bound schedule's run follows its
``multitask_strategy`` on a thread busy with another run: ``reject`` (the default) refuses it (the
slot is skipped, which stderr says), ``enqueue`` queues it behind, ``interrupt`` and ``rollback`` cancel
the run in flight. A thread-bound schedule whose thread was deleted is deleted at its next slot.
"""

from __future__ import annotations

import contextlib
from functools import partial
from typing import Any

from grapharc.crons.errors import UnknownCronError
from grapharc.crons.records import CRON_ID, CRON_SLOT, CronRecord
from grapharc.errors import GraphARCError
from grapharc.server.api import assistant_runs
from grapharc.server.api.budgets import run_budget
from grapharc.server.api.context import ApiContext
from grapharc.server.api.cron_scheduler import CronScheduler
from grapharc.server.api.guards import require_run
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.run_config import caller_config
from grapharc.server.api.runs import RunCreate, check_input, queue
from grapharc.server.api.stateless import StatelessRunCreate, queue_on_new_thread
from grapharc.server.api.streaming import stream_modes
from grapharc.server.auth import AuthConfig, User
from grapharc.server.notices import notice
from grapharc.session.errors import UnknownSessionError
from grapharc.session.records import Session, iso
from grapharc.stores import offload


async def check_run(ctx: ApiContext, body: RunCreate, user: User | None, thread: Session | None) -> None:
    """Refuse, before the schedule is kept, a run ``queue`` would refuse whenever it fired: with the
    run's own messages (``thread``: the thread a thread-bound schedule runs on, else None)."""
    if body.command is not None:
        raise ApiProblem(422, "a schedule starts turns with input; it answers no approval",
                         hint="answer an approval with a run on its own thread: POST /threads/{id}/runs")
    body = await assistant_runs.resolved(ctx, body, user)
    graph = ctx.manager.graphs.get(body.assistant_id)
    require_run(user, graph.name)
    stream_modes(body.stream_mode)
    run_budget(body.budget, ctx.ceiling)
    caller_config(graph.builder, body.config, body.context)
    if thread is not None and thread.graph != graph.name:
        raise ApiProblem(409, f"thread {thread.thread_id} runs graph {thread.graph!r}, not {graph.name!r}",
                         hint=f"use assistant_id {thread.graph!r} for this thread")
    check_input(ctx, graph.name, body.input or {}, {} if thread is None else None)


def run_body(cron: CronRecord, slot: float) -> RunCreate:
    """The body of the run ``cron`` starts for ``slot``: its payload, the schedule and slot in its
    metadata; a schedule with no thread starts a stateless run (``on_run_completed``: what becomes
    of its thread, ``delete`` unless it says)."""
    payload: dict[str, Any] = {**cron.payload, "metadata": {**(cron.payload.get("metadata") or {}),
                                                           CRON_ID: cron.cron_id, CRON_SLOT: iso(slot)}}
    if cron.thread_id is not None:
        return RunCreate.model_validate(payload)
    return StatelessRunCreate.model_validate({**payload, "on_completion": cron.on_run_completed or "delete"})


def creator(auth: AuthConfig | None, cron: CronRecord) -> User | None:
    """Whom ``cron``'s runs are asked by: its creator as the auth file now knows them (without an
    auth file, nobody in particular); one the file no longer has is refused."""
    if auth is None or cron.user_id is None:
        return None
    user = auth.users.get(cron.user_id)
    if user is None:
        raise ApiProblem(403, f"cron {cron.cron_id}'s creator {cron.user_id!r} is not a user of the auth "
                              "file",
                         hint="delete the schedule, or make it again as a user the file has")
    return user


async def fire(ctx: ApiContext, auth: AuthConfig | None, cron: CronRecord, slot: float) -> None:
    """Queue the run of ``cron``'s ``slot`` as run creation does; the run, or the refusal (not
    raised: the slot is spent either way, ``grapharc.server.api.cron_scheduler``), is a line on stderr."""
    try:
        user = creator(auth, cron)
        body = run_body(cron, slot)
        if isinstance(body, StatelessRunCreate):
            run = await queue_on_new_thread(ctx, body, user)
        else:
            run = await queue(ctx, str(cron.thread_id), body, user)
    except UnknownSessionError:  # its thread was deleted: the schedule goes too, as on LangGraph's server
        await offload.to_thread(_forget, ctx, cron)
        notice(f"cron {cron.cron_id} is deleted: its thread {cron.thread_id} is gone")
        return
    except (GraphARCError, ValueError) as exc:  # ValueError: pydantic's, a payload no longer valid
        notice(f"cron {cron.cron_id} did not start its run for {iso(slot)}: {exc}")
        return
    notice(f"cron {cron.cron_id} started run {run.run_id} on thread {run.thread_id} for {iso(slot)}")


def _forget(ctx: ApiContext, cron: CronRecord) -> None:
    """Delete ``cron`` (one another process deleted first is gone already)."""
    if ctx.crons is not None:
        with contextlib.suppress(UnknownCronError):
            ctx.crons.delete(cron.cron_id)


def start_schedules(ctx: ApiContext, auth: AuthConfig | None) -> None:
    """Start this process's cron scheduler over ``ctx``'s cron store, each slot fired by ``fire``
    (none when the sessions' store keeps no schedules); ``ctx.aclose`` stops it."""
    if ctx.crons is not None:
        ctx.scheduler = CronScheduler(ctx.crons, partial(fire, ctx, auth))
        ctx.scheduler.start()
