"""Cron schedules over HTTP, as the SDK's ``client.crons.*`` calls them.

``POST /threads/{thread_id}/runs/crons`` schedules runs on a thread, ``POST /runs/crons`` runs
each on a new thread (``on_run_completed``: what becomes of it, ``delete`` by default); a body is
a run-starting body (``grapharc.server.api.runs.RunCreate``) plus ``schedule`` (a cron expression
croniter reads), ``timezone`` (an IANA name; UTC when none), ``end_time`` (ISO 8601) and
``enabled``. The run is checked as run creation checks it (``grapharc.server.api.cron_runs``), so
a schedule whose run would be refused is refused with the run's message. ``POST
/runs/crons/search`` and ``/count`` find schedules, ``PATCH /runs/crons/{id}`` changes one (its run
checked again), ``DELETE /runs/crons/{id}`` removes it. With an auth file a user sees and changes
only the schedules they made. Times are read from the scheduler's clock (``grapharc.server.cron_clock``).
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from grapharc.crons.contracts import CronStore
from grapharc.crons.errors import UnknownCronError
from grapharc.crons.manage import new_cron, revised
from grapharc.crons.records import CronFilter, CronRecord
from grapharc.crons.schedule import end_time_of
from grapharc.server import cron_clock
from grapharc.server.api.context import ApiContext, api
from grapharc.server.api.cron_runs import check_run
from grapharc.server.api.guards import Caller, ReadableThread
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.runs import RunCreate
from grapharc.server.auth import User
from grapharc.session.records import Session
from grapharc.stores import offload

router = APIRouter(tags=["crons"])
CronSortBy = Literal["cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date",
                     "end_time"]
"""What a search may sort by (``grapharc.crons.records.SORT_COLUMNS``' keys, the SDK's ``CronSortBy``)."""
Context = Annotated[ApiContext, Depends(api)]

TIMING = ("schedule", "timezone", "end_time", "enabled", "on_run_completed")
"""The fields of a schedule's body that are the schedule's; the rest are its run's."""
FIELDS = ("cron_id", "assistant_id", "thread_id", "on_run_completed", "end_time", "schedule", "timezone",
          "created_at", "updated_at", "payload", "user_id", "next_run_date", "metadata", "enabled")
"""A schedule's fields as the SDK reads them (``Cron``), which ``select`` may choose from."""


class ThreadCronCreate(RunCreate):
    """``POST /threads/{thread_id}/runs/crons``: a run-starting body and when to start it."""

    schedule: str = Field(min_length=1, max_length=200)
    timezone: str | None = Field(default=None, max_length=100)
    end_time: str | None = Field(default=None, max_length=100)
    enabled: bool = True


class CronCreate(ThreadCronCreate):
    """``POST /runs/crons``: each run on a new thread, which ``on_run_completed`` deletes or keeps."""

    on_run_completed: Literal["delete", "keep"] | None = None


class CronSearch(BaseModel):
    """``POST /runs/crons/search``."""

    model_config = ConfigDict(extra="forbid")
    assistant_id: str | None = None
    thread_id: str | None = None
    enabled: bool | None = None
    metadata: dict[str, Any] | None = None
    limit: int = Field(default=10, ge=0, le=1000)
    offset: int = Field(default=0, ge=0, le=10**9)
    sort_by: CronSortBy = "created_at"
    sort_order: Literal["asc", "desc"] = "desc"
    select: list[str] | None = None


class CronCount(BaseModel):
    """``POST /runs/crons/count``."""

    model_config = ConfigDict(extra="forbid")
    assistant_id: str | None = None
    thread_id: str | None = None
    metadata: dict[str, Any] | None = None


class CronPatch(BaseModel):
    """``PATCH /runs/crons/{cron_id}``: the schedule's own fields; any other field is its run's
    (``input``, ``metadata``, ``config``...), checked as a run-starting body's."""

    model_config = ConfigDict(extra="allow")
    schedule: str | None = Field(default=None, min_length=1, max_length=200)
    timezone: str | None = Field(default=None, max_length=100)
    end_time: str | None = Field(default=None, max_length=100)
    enabled: bool | None = None
    on_run_completed: Literal["delete", "keep"] | None = None


@router.post("/threads/{thread_id}/runs/crons", dependencies=[ReadableThread])
async def create_thread_cron(thread_id: str, body: ThreadCronCreate, ctx: Context,
                             user: Caller) -> dict[str, Any]:
    """Schedule runs on this thread by a cron expression: the schedule."""
    session = await offload.to_thread(ctx.manager.get, thread_id)
    return (await _create(ctx, body, user, session)).to_dict()


@router.post("/runs/crons")
async def create_cron(body: CronCreate, ctx: Context, user: Caller) -> dict[str, Any]:
    """Schedule stateless runs (each on a new thread) by a cron expression: the schedule."""
    return (await _create(ctx, body, user, None)).to_dict()


@router.post("/runs/crons/search")
async def search_crons(body: CronSearch, ctx: Context, user: Caller) -> list[dict[str, Any]]:
    """The schedules (with an auth file, the caller's own) filtered by assistant, thread, metadata
    and ``enabled``, sorted and paged (``select`` keeps only those fields)."""
    unknown = sorted(set(body.select or ()) - set(FIELDS))
    if unknown:
        raise ApiProblem(422, f"select names no cron field: {', '.join(unknown)}",
                         hint=f"the fields are {', '.join(FIELDS)}")
    where = _filter(user, body.assistant_id, body.thread_id, body.metadata, enabled=body.enabled)
    found = await offload.to_thread(partial(_store(ctx).search, where, limit=body.limit, offset=body.offset,
                                            sort_by=body.sort_by, descending=body.sort_order == "desc"))
    shapes = [cron.to_dict() for cron in found]
    return [{name: s[name] for name in body.select} for s in shapes] if body.select else shapes


@router.post("/runs/crons/count")
async def count_crons(body: CronCount, ctx: Context, user: Caller) -> int:
    """How many schedules a search with the same filters finds."""
    where = _filter(user, body.assistant_id, body.thread_id, body.metadata)
    return await offload.to_thread(_store(ctx).count, where)


@router.patch("/runs/crons/{cron_id}")
async def update_cron(cron_id: str, body: CronPatch, ctx: Context, user: Caller) -> dict[str, Any]:
    """Change a schedule: its own fields as sent (``end_time`` null clears it), its run's merged into
    its run body and checked as a new schedule's are; a change of its timing sets its next slot."""
    store = _store(ctx)
    current = await _own(ctx, cron_id, user)
    sent = body.model_dump(exclude_unset=True)
    payload = {**current.payload, **{k: v for k, v in sent.items() if k not in TIMING}}
    thread = None if current.thread_id is None else await offload.to_thread(ctx.manager.get,
                                                                             current.thread_id)
    await check_run(ctx, _run_of(payload), user, thread)
    changes: dict[str, Any] = {k: v for k, v in sent.items() if k in TIMING}
    if "end_time" in changes:
        changes["end_time"] = end_time_of(changes["end_time"])
    if "metadata" in sent:
        changes["metadata"] = sent["metadata"] or {}
    now = cron_clock.now()
    made = await offload.to_thread(store.update, cron_id,
                                   lambda c: revised(c, {**changes, "payload": payload}, now))
    _changed(ctx)
    return made.to_dict()


@router.delete("/runs/crons/{cron_id}", status_code=204)
async def delete_cron(cron_id: str, ctx: Context, user: Caller) -> Response:
    """Delete a schedule (with an auth file, one of the caller's own): it fires no more."""
    await _own(ctx, cron_id, user)
    await offload.to_thread(_store(ctx).delete, cron_id)
    _changed(ctx)
    return Response(status_code=204)


async def _create(ctx: ApiContext, body: ThreadCronCreate, user: User | None,
                  thread: Session | None) -> CronRecord:
    """Check the schedule and its run, then keep it with its first slot after now."""
    store = _store(ctx)
    if body.checkpoint_id is not None or body.checkpoint is not None:
        raise ApiProblem(422, "a schedule starts turns where its thread stands; it takes no checkpoint",
                         hint="leave checkpoint_id and checkpoint out")
    await check_run(ctx, body, user, thread)
    payload = body.model_dump(mode="json", exclude_unset=True, exclude=set(TIMING))
    cron = new_cron(assistant_id=body.assistant_id, schedule=body.schedule, payload=payload,
                    now=cron_clock.now(), thread_id=thread.thread_id if thread is not None else None,
                    timezone=body.timezone, end_time=end_time_of(body.end_time), enabled=body.enabled,
                    metadata=body.metadata, user_id=user.name if user is not None else None,
                    on_run_completed=getattr(body, "on_run_completed", None))
    made = await offload.to_thread(store.add, cron)
    _changed(ctx)
    return made


def _run_of(payload: dict[str, Any]) -> RunCreate:
    """A changed schedule's run body, refused (422) as a run's body would be."""
    try:
        return RunCreate.model_validate(payload)
    except ValidationError as exc:
        errors = [{"loc": ["body", *e["loc"]], "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
        raise ApiProblem(422, "the schedule's run does not match what a run takes", errors=errors,
                         hint="fix the fields listed in 'errors'; unknown fields are refused") from None


async def _own(ctx: ApiContext, cron_id: str, user: User | None) -> CronRecord:
    """The schedule ``cron_id`` if ``user`` may see it (their own, with an auth file), else a 404."""
    cron = await offload.to_thread(_store(ctx).get, cron_id)
    if user is not None and cron.user_id != user.name:
        raise UnknownCronError(cron_id)
    return cron


def _filter(user: User | None, assistant_id: str | None, thread_id: str | None,
            metadata: dict[str, Any] | None, *, enabled: bool | None = None) -> CronFilter:
    """A search's conditions; with an auth file, only the caller's own schedules."""
    return CronFilter(assistant_id=assistant_id, thread_id=thread_id, enabled=enabled,
                      user_id=user.name if user is not None else None, metadata=metadata or {})


def _changed(ctx: ApiContext) -> None:
    """A schedule changed here: this process's scheduler looks again now, not at its next wake."""
    if ctx.scheduler is not None:
        ctx.scheduler.wake()


def _store(ctx: ApiContext) -> CronStore:
    """The cron store beside the sessions, or a 501 when their store keeps none."""
    if ctx.crons is None:
        raise ApiProblem(501, "this server's session store keeps no cron schedules",
                         hint="serve sessions from a store that registers the crons kind (sqlite:, "
                              "postgresql:)")
    return ctx.crons

