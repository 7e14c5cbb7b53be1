"""``GET /threads/{id}/stream`` (the SDK's ``threads.join_stream``): a thread's runs as they come.

The stream sends each run of the thread that is pending or running when it is joined, then each
later one, in the order they run, and stays open until the client closes it (LangGraph's server
does the same). What it sends of each run depends on ``stream_mode``:

- ``run_modes`` (the default): what the run's own stream sends in the run's modes (``metadata``
  naming it first), then ``run_done`` with its id and how it ended;
- ``lifecycle``: only each run's ``metadata`` (it began) and ``run_done`` (it ended);
- ``state_update``: the thread's state after each step (``values`` events), whatever the run's modes.

Each event comes from the thread's durable trace, as a run's stream's do (``grapharc.server.api.streaming``),
so runs executed by another worker are sent too; the stream looks for a new run when a run here
begins or ends, and otherwise every ``IDLE_POLL_SECONDS``.

Every event's id names its run: ``<run id>`` for its ``metadata``, ``<run id>:<id on the run's
stream>`` for the run's own events, ``<run id>:done`` for ``run_done``. A client that rejoins with
the last id it saw in ``Last-Event-ID`` gets every later event once: the rest of that run (from
where its own stream would resume), then every run after it, ended or not (an id this thread's
stream never sent, or one of a run no longer among its newest ``RECENT_RUNS``, is a 422).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Query

from grapharc.runs.records import RunRecord
from grapharc.server.api.context import ApiContext
from grapharc.server.api.guards import ReadableThread
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.runs import Context, LastEventId
from grapharc.server.api.streaming import (
    HEARTBEAT_SECONDS,
    Cursor,
    check_cursor,
    cursor_of,
    live_cursor_of,
    run_events,
    stream_modes,
)
from grapharc.server.event_stream import EventStream
from grapharc.session.errors import UnknownSessionError
from grapharc.stores import offload

router = APIRouter(prefix="/threads", tags=["threads"])

THREAD_MODES = ("run_modes", "lifecycle", "state_update")
IDLE_POLL_SECONDS = 1.0
"""How often a thread stream with no run to send looks for one a run here has not announced (a run
queued or executed by another worker)."""
RECENT_RUNS = 100
"""How many of the thread's newest runs a look reads (runs older than these ran before)."""
DONE = "done"
"""The last part of a ``run_done`` event's id."""


def thread_modes(requested: list[str] | None) -> set[str]:
    """The thread stream modes asked (comma-separated or repeated; none or empty: ``run_modes``)."""
    modes = {m.strip() for text in requested or [] for m in text.split(",") if m.strip()}
    unknown = sorted(modes - set(THREAD_MODES))
    if unknown:
        raise ApiProblem(422, f"unknown thread stream mode(s): {', '.join(unknown)}",
                         hint=f"a thread's stream takes {', '.join(THREAD_MODES)}")
    return modes or {"run_modes"}


@router.get("/{thread_id}/stream", dependencies=[ReadableThread])
async def join_thread_stream(thread_id: str, ctx: Context, last_event_id: LastEventId = None,
                             stream_mode: Annotated[list[str] | None, Query()] = None) -> EventStream:
    """Follow the thread as server-sent events: its runs' events as they happen, while the stream
    stays open (``Last-Event-ID``: after an event this stream sent)."""
    modes = thread_modes(stream_mode)
    runs = await offload.to_thread(_recent, ctx, thread_id)  # 404 for an unknown thread
    if last_event_id:
        sent, resume = await offload.to_thread(_resumed, ctx, runs, last_event_id)
    else:
        sent, resume = {run.run_id for run in runs if run.ended}, None  # ended before the join
    return EventStream(_thread_events(ctx, thread_id, modes, sent, resume), heartbeat=HEARTBEAT_SECONDS)


@dataclass(frozen=True, slots=True)
class Resume:
    """Where a rejoined thread stream picks up inside a run: after ``cursor`` on the run's trail
    and ``live_after`` in its live log (as the run's own stream resumes)."""

    run_id: str
    cursor: Cursor | None
    live_after: int


def _resumed(ctx: ApiContext, runs: list[RunRecord], last_event_id: str) -> tuple[set[str], Resume | None]:
    """The runs (of ``runs``, oldest first) a client that saw ``last_event_id`` has had in full, and
    where in the next one it resumes (None: at its start); a 422 for an id this stream never sent."""
    run_id, _, rest = last_event_id.strip().partition(":")
    order = [run.run_id for run in runs]
    if run_id not in order:
        raise ApiProblem(422, f"Last-Event-ID {last_event_id[:100]!r} is not an id this thread's stream "
                              f"sent (or names a run older than its newest {RECENT_RUNS})",
                         hint="hand back the id of the last event received, such as <run id>:12-0")
    sent = set(order[:order.index(run_id)])
    if rest == DONE:
        return {*sent, run_id}, None
    run = runs[order.index(run_id)]
    cursor = cursor_of(rest)
    if cursor is not None:
        check_cursor(ctx.manager, run, cursor, rest)
    return sent, Resume(run_id, cursor, live_cursor_of(rest))


def _recent(ctx: ApiContext, thread_id: str) -> list[RunRecord]:
    """The thread's newest runs, oldest first (``UnknownSessionError`` for an unknown thread)."""
    ctx.manager.get(thread_id)
    return list(reversed(ctx.runs.of_thread(thread_id, limit=RECENT_RUNS)))


async def _thread_events(ctx: ApiContext, thread_id: str, modes: set[str], sent: set[str],
                         resume: Resume | None) -> AsyncIterator[dict[str, Any]]:
    """Each run of the thread not in ``sent``, in turn, as ``modes`` says (the first from where
    ``resume`` says, if it names it); open until the client goes (or the thread is deleted)."""
    while True:
        woken = ctx.progress.changed(thread_id)
        try:
            recent = await offload.to_thread(_recent, ctx, thread_id)
        except UnknownSessionError:
            return
        due = [run for run in recent if run.run_id not in sent]
        if not due:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(IDLE_POLL_SECONDS):
                    await woken.wait()
            continue
        run = due[0]
        at = resume if resume is not None and resume.run_id == run.run_id else None
        events = run_events(ctx, run, _run_modes(run, modes), *((at.cursor, at.live_after) if at else ()))
        async for event in events:
            if _sends(event["event"], modes) and not (at and event["event"] == "metadata"):
                yield {**event, "id": _thread_id_of(run, event)}
            if event["event"] == "end":
                yield {"event": "run_done", "id": f"{run.run_id}:{DONE}",
                       "data": json.dumps({**json.loads(event["data"]), "thread_id": thread_id})}
        sent.add(run.run_id)


def _thread_id_of(run: RunRecord, event: dict[str, Any]) -> str:
    """A run's event's id on the thread's stream: the run's id, then the event's on the run's stream."""
    return f"{run.run_id}:{event['id']}" if event.get("id") else run.run_id


def _run_modes(run: RunRecord, modes: set[str]) -> list[str]:
    """The run stream modes to read ``run`` in: its own for ``run_modes``, ``values`` for
    ``state_update`` (``lifecycle`` needs none of them, so it reads the cheapest: ``updates``)."""
    wanted = set(run.stream_modes) if "run_modes" in modes else set()
    if "state_update" in modes:
        wanted.add("values")
    return stream_modes(sorted(wanted) or ["updates"])


def _sends(event: str, modes: set[str]) -> bool:
    """Whether a run's event of kind ``event`` goes on a thread stream in ``modes`` (the run's ``end``
    never does: ``run_done`` says it)."""
    if event == "end":
        return False
    if event == "metadata":
        return bool(modes & {"run_modes", "lifecycle"})
    return "run_modes" in modes or (event == "values" and "state_update" in modes)
