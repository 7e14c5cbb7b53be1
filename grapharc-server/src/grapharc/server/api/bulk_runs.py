"""Runs in bulk, as LangGraph's server offers them: ``POST /runs/batch`` (the SDK's
``runs.create_batch``: several stateless runs queued at once) and ``POST /runs/cancel``
(``runs.cancel_many``: runs named by thread and id, or every run pending or running).

A batch is checked whole before any of its runs is queued, so a bad run refuses the batch and
leaves nothing behind; a cancel names runs that must all exist (and be the caller's to see) before
any is cancelled. A cancel by status reaches only the runs of threads the caller may read and
assistants they may run.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

from fastapi import APIRouter, Response
from pydantic import BaseModel, ConfigDict, Field

from grapharc.runs.records import PENDING, RUNNING, RunRecord
from grapharc.server.api import shapes
from grapharc.server.api.context import ApiContext
from grapharc.server.api.guards import Caller, asker, require_run
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.runs import Context, check_start
from grapharc.server.api.stateless import StatelessRunCreate, queue_on_new_thread
from grapharc.server.auth import User
from grapharc.server.service import access
from grapharc.session.errors import UnknownSessionError
from grapharc.stores import offload

router = APIRouter(prefix="/runs", tags=["runs"])

MAX_BATCH = 100
"""The most runs one batch may queue."""
_STATUSES = {"pending": (PENDING,), "running": (RUNNING,), "all": (PENDING, RUNNING)}


class CancelMany(BaseModel):
    """POST /runs/cancel: the runs ``run_ids`` of ``thread_id``, or every run in ``status`` (of
    ``thread_id`` only, if given)."""

    model_config = ConfigDict(extra="forbid")
    thread_id: str | None = None
    run_ids: list[str] | None = Field(default=None, min_length=1, max_length=1000)
    status: Literal["pending", "running", "all"] | None = None


@router.post("/batch")
async def create_batch(body: list[StatelessRunCreate], ctx: Context, user: Caller) -> list[dict[str, Any]]:
    """Queue 1 to 100 stateless runs at once, each on a new thread (none may answer an
    approval): their run records, in order."""
    if not 1 <= len(body) <= MAX_BATCH:
        raise ApiProblem(422, f"a batch holds 1 to {MAX_BATCH} runs, not {len(body)}",
                         hint="send the runs in several batches")
    for index, run in enumerate(body):
        if run.command is not None:
            raise ApiProblem(422, f"run {index} of the batch has a command; a batch's runs are stateless and "
                                  "start new threads, which have no approval to answer",
                             hint="answer an approval with a run on its own thread: POST /threads/{id}/runs")
        check_start(ctx, run, user)
        await ctx.webhooks.checked(run.webhook)
    return [shapes.run(await queue_on_new_thread(ctx, run, user)) for run in body]


@router.post("/cancel", status_code=204)
async def cancel_many(body: CancelMany, ctx: Context, user: Caller,
                      action: Literal["interrupt", "rollback"] = "interrupt") -> Response:
    """Cancel the runs ``body`` names (each as ``POST .../cancel`` would, without waiting; with
    ``rollback`` each is deleted with what it wrote, as one cancel with that action is)."""
    await offload.to_thread(partial(_cancel, ctx, body, user, action))
    ctx.worker.wake()
    return Response(status_code=204)


def _cancel(ctx: ApiContext, body: CancelMany, user: User | None, action: str) -> None:
    """Cancel the runs ``body`` chooses with ``action``, once all are checked (in one trip to a thread)."""
    now = ctx.manager.clock()
    for run in _chosen(ctx, body, user):
        ctx.runs.request_cancel(run.thread_id, run.run_id, now, by=asker(user), action=action)


def _chosen(ctx: ApiContext, body: CancelMany, user: User | None) -> list[RunRecord]:
    """The runs ``body`` names, all checked before any is cancelled: named ones must exist on a
    thread the caller may read and be of assistants they may run (404 and 403 as for one cancel);
    runs chosen by status are those the caller may cancel."""
    if body.status is not None:
        if body.run_ids is not None:
            raise ApiProblem(422, "name runs by run_ids or by status, not both",
                             hint="send thread_id with run_ids, or a status (pending, running, all)")
        unended = ctx.runs.unended(_STATUSES[body.status])
        return [run for run in unended
                if body.thread_id in (None, run.thread_id) and _may_cancel(ctx, run, user)]
    if body.thread_id is None or body.run_ids is None:
        raise ApiProblem(422, "cancel_many needs thread_id with run_ids, or a status",
                         hint='e.g. {"thread_id": "t", "run_ids": ["r"]} or {"status": "pending"}')
    session = ctx.manager.get(body.thread_id)
    if not access.may_read(user, session):
        raise UnknownSessionError(body.thread_id)
    runs = [ctx.runs.get(body.thread_id, run_id) for run_id in body.run_ids]
    for run in runs:
        require_run(user, run.assistant_id)
    return runs


def _may_cancel(ctx: ApiContext, run: RunRecord, user: User | None) -> bool:
    """Whether ``user`` may cancel ``run``: they may read its thread and run its assistant."""
    if user is None:
        return True
    try:
        session = ctx.manager.get(run.thread_id)
    except UnknownSessionError:
        return False
    return access.may_read(user, session) and access.may_run(user, run.assistant_id)
