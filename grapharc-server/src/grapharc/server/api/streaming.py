"""Server-sent events of a run, read from the thread's durable trace (its audit trail) in order.

Every event carries an id ``<seq>-<mode>``: the trace entry it comes from and the stream mode's
place in ``STREAM_MODES``; the closing events come last, ``error`` (a failed run's, as LangGraph's
server sends it: the exception's type name and message) as ``<seq>-ERROR_INDEX`` and ``end`` as
``<seq>-END_INDEX``, ``seq`` the run's last trace entry. A client that reconnects with that id in
``Last-Event-ID`` (with the run's modes or a subset of them) gets every later event once and no
earlier one; an id this run's stream never sent is refused. The modes only a run's live log serves
(``grapharc.server.api.live``: tokens, custom writes, debug...) are merged in by the time each
event was kept (the run's worker's clock for both); once one has been sent, ids are
``<seq>-<mode>-<n>``, carrying the log's cursor too, so a reconnect resumes both. An ``events``
event's metadata carries ``at``, when its trace entry was written (epoch seconds), so a client
can tell how late it reads it. The run is executed by a worker loop: a client that goes away
stops only its stream, unless the run was started with ``on_disconnect: cancel`` (or the rejoin
asked ``cancel_on_disconnect``), which requests the run's cancel. A run rolled back while
streamed is gone: its stream ends with status ``rollback``.

The stream only reads the durable records (the run's, in the run store, and the thread's audit
trail), so a client can stream a run executing on another worker: on the event loop where every
store it reads says its reads may run there (``ApiContext.reads_on_loop``: SQLite's, about nine
reads per run, each a trip to a thread saved), else in one trip to the store pool per read. Of a
run executing here, it
renders a node from the checkpoints the turn's audit scan has just prepared
(``Sessions.scanned_at``) when they hold the node's result, rather than read them again.

It is woken when a run of its thread executing in this process has saved and audited a node
(``Progress.watcher`` is the turn's record watcher, and the session layer drops a watcher
that raises rather than fail the turn), by the session store when another process
writes the thread's trail (where the store can tell: PostgreSQL's LISTEN/NOTIFY), and otherwise
reads again after ``poll_seconds`` (``wait_for_progress``). A wake-up that says only entries of
kinds its modes never render were written (``RENDERED``: a turn's claim and the record of a run it
made, in the ``updates`` mode), or that a run of the thread began here, is let pass without a read;
what they wrote is read with the next. Nothing a stream client does reaches a node.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import re
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from grapharc.runs.contracts import refreshed
from grapharc.runs.errors import UnknownRunError
from grapharc.runs.records import ERROR, RUNNING, LiveEvent, RunRecord
from grapharc.server.api import interrupts, run_facts
from grapharc.server.api.encoding import json_text
from grapharc.server.api.live import LIVE_MODES, live_events, merged
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.progress import BEGAN, Change
from grapharc.server.event_stream import EventStream
from grapharc.session.history import step_of
from grapharc.session.manager import SessionManager
from grapharc.session.records import AuditEntry, AuditKind
from grapharc.stores import offload

if TYPE_CHECKING:
    from grapharc.server.api.context import ApiContext
    from grapharc.server.service.sessions import Sessions

STREAM_MODES = ("values", "updates", "events")
"""The modes rendered from the trail (an event id's ``<mode>`` is a place in this tuple)."""
ALL_MODES = (*STREAM_MODES, *LIVE_MODES)
ERROR_INDEX = len(STREAM_MODES)
"""The place of a failed run's ``error`` event in its last entry's events (after every mode's)."""
END_INDEX = ERROR_INDEX + 1
"""The place of the ``end`` event: the last of all."""
HEARTBEAT_SECONDS = 15.0
"""How long an event stream sends nothing before it sends a ping (a comment line)."""
POLL_SECONDS = 0.2
LOCAL_POLL_SECONDS = 2.0
"""How often a reader re-reads a run this process executes: the worker wakes it as the run begins,
as its turn claims the thread, after each saved node and at the run's end, so this is only a
fallback (say the run is reclaimed by another worker)."""

_EVENT_ID = re.compile(r"^([0-9]{1,30})-([0-9]{1,30})(?:-([0-9]{1,30}))?$")
"""``<seq>-<mode>`` or ``<seq>-<mode>-<n>``, bounded: int() of thousands of digits raises."""
LAST_SEQ = 2**63 - 1
"""The largest trace entry number a store can hold (SQLite's and PostgreSQL's 64-bit integers): an
id past it was never sent, and would fail the store's read."""
Cursor = tuple[int, int]
INPUT_STATE = -(2**62)
"""The key, among the checkpoints by step a stream renders from, of a start's input applied."""
PAUSED_STATE = INPUT_STATE - 1
"""The key of the state a pause left (``values`` at an ``asked`` entry, with its ``__interrupt__``)."""
NOT_SAVED_YET = object()
"""A node's ``values`` event read too early: the audit scan records a node once its writes are
saved, which can be before LangGraph saves the checkpoint of the node's step. The stream waits
for it (skipping it lost the event); once the run has ended, a step with no checkpoint (a runner
killed between the two) has no values to send."""
RENDERED = {"updates": frozenset({AuditKind.NODE, AuditKind.ASKED}),
            "values": frozenset({AuditKind.NODE, AuditKind.ASKED, AuditKind.CLAIMED})}
"""The kinds of trail entry ``_render`` may send an event for in each mode but ``events`` (which
sends one for every entry)."""
ROLLED_BACK = "rollback"
"""The end event's status for a run rolled back (deleted) while streamed, as LangGraph's worker names it."""


def stream_modes(requested: str | list[str], default: tuple[str, ...] = ()) -> list[str]:
    """The requested modes (comma-separated or listed) in ``STREAM_MODES`` order, or ``default``
    (a rejoined run's own modes) when none is named (the SDK sends ``stream_mode=`` empty when its
    caller names none); an unknown one is refused."""
    given = [requested] if isinstance(requested, str) else list(requested)
    modes = {m.strip() for text in given for m in text.split(",") if m.strip()} or set(default)
    unknown = sorted(modes - set(ALL_MODES))
    if unknown or not modes:
        raise ApiProblem(422, f"unknown stream mode(s): {', '.join(unknown) or 'none given'}",
                         hint=f"this server streams {', '.join(ALL_MODES)}")
    return [m for m in ALL_MODES if m in modes]


def cursor_of(last_event_id: str | None) -> Cursor | None:
    """Where a (re)joining client's stream resumes on the trail: after ``Last-Event-ID``; None: at
    the run's start. (``live_cursor_of`` says where in the live log.)"""
    match = _event_id(last_event_id)
    return None if match is None else (int(match[1]), int(match[2]))


def live_cursor_of(last_event_id: str | None) -> int:
    """Where a (re)joining client's stream resumes in the run's live log: after the event numbered
    by ``Last-Event-ID``'s third part (0, the log's start, for an id without one)."""
    match = _event_id(last_event_id)
    return int(match[3]) if match is not None and match[3] is not None else 0


def _event_id(last_event_id: str | None) -> re.Match[str] | None:
    """``Last-Event-ID`` checked: ``<seq>-<mode>`` or ``<seq>-<mode>-<n>`` (``<mode>`` up to
    ``END_INDEX``, the closing events'), else a 422."""
    if not last_event_id:
        return None
    match = _EVENT_ID.match(last_event_id.strip())
    if match is None or int(match[1]) > LAST_SEQ or int(match[2]) > END_INDEX:
        raise _never_sent(last_event_id)
    return match


def _never_sent(last_event_id: str) -> ApiProblem:
    return ApiProblem(422, f"Last-Event-ID {last_event_id[:100]!r} is not an id this server sent",
                      hint="hand back the id of the last event received, such as 12-0")


def check_cursor(manager: SessionManager, run: RunRecord, cursor: Cursor | None, last_event_id: str) -> None:
    """Refuse a well-formed ``Last-Event-ID`` this run's stream never sent: a mode the run does not
    stream (a closing index only on a failed or ended run), or a seq that is not one of the run's
    own trace entries (before its part of the trail, past its end, or another thread's)."""
    if cursor is None:
        return
    seq, index = cursor
    if live_cursor_of(last_event_id) and (seq, index) == (run.after_seq, len(STREAM_MODES) - 1):
        return  # live events sent before any of the trail's: the stream's start
    if index >= ERROR_INDEX:  # a closing event: only an ended run's, at its last entry
        if not run.ended or seq != (run.end_seq or 0) or (index == ERROR_INDEX and run.status != ERROR):
            raise _never_sent(last_event_id)
        return
    last = run.end_seq if run.ended else LAST_SEQ
    if (run.after_seq is None or STREAM_MODES[index] not in run.stream_modes
            or not run.after_seq < seq <= (last or 0)):
        raise _never_sent(last_event_id)
    trail = manager.audit(run.thread_id, seq - 1)
    if not trail or trail[0].seq != seq:
        raise _never_sent(last_event_id)


def sse_response(ctx: ApiContext, run: RunRecord, modes: list[str], cursor: Cursor | None, *,
                 cancel_on_disconnect: bool, live_after: int = 0,
                 queued: Change | None = None) -> EventStream:
    """The run's events after ``cursor`` (and its live log's after ``live_after``) as an SSE
    response, with heartbeats; its Location rejoins it. ``queued``: the thread's change taken before
    ``run`` (pending, as its add returned it) was added, which its beginning sets: the stream's
    first read waits for it (or a poll's end), as nothing can be read of the run before."""
    location = f"/threads/{run.thread_id}/runs/{run.run_id}/stream"
    events = _events(ctx, run, modes, cursor, cancel_on_disconnect, live_after, queued)
    return EventStream(events, heartbeat=HEARTBEAT_SECONDS,
                       headers={"Location": location, "Content-Location": location})


def run_events(ctx: ApiContext, run: RunRecord, modes: list[str], cursor: Cursor | None = None,
               live_after: int = 0) -> AsyncIterator[dict[str, Any]]:
    """The run's events in ``modes`` from its start (or after ``cursor`` and ``live_after``, as a
    rejoined stream's) to its ``end``, as its own stream sends them (a thread's stream sends each of
    its runs' in turn: ``grapharc.server.api.thread_stream``)."""
    return _events(ctx, run, modes, cursor, False, live_after)


def poll_seconds(run: RunRecord, here: str) -> float:
    """How long a reader of ``run`` waits before reading it again unwoken: ``LOCAL_POLL_SECONDS``
    while the worker ``here`` (this process's) runs it, else ``POLL_SECONDS`` (a pending run may be
    claimed by any worker, and another worker's progress wakes nobody here)."""
    return LOCAL_POLL_SECONDS if run.status == RUNNING and run.worker == here else POLL_SECONDS


async def wait_for_progress(manager: SessionManager, run: RunRecord, here: str, woken: asyncio.Event) -> bool:
    """Wait until ``run`` may have moved on: ``woken`` (``Progress.changed(thread_id)``, taken before
    the durable records were read) is set by progress of a run executing in this process; another
    process's write to the thread's trail wakes it where the store can tell (PostgreSQL's
    LISTEN/NOTIFY); otherwise the records are read again after ``poll_seconds`` (with no store
    wait beside it: a task per wait was much of an idle stream's cost). Whether the store's wait
    did not end it (so only ``woken`` says what changed, if it is set)."""
    poll = poll_seconds(run, here)
    if manager.changes is None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(poll):  # no task of its own, unlike wait_for
                await woken.wait()
        return True
    waits = [asyncio.ensure_future(woken.wait()),
             asyncio.ensure_future(manager.wait_for_change(run.thread_id, poll))]
    try:
        done, _ = await asyncio.wait(waits, timeout=poll, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
    return waits[1] not in done


async def _wait_for_news(ctx: ApiContext, run: RunRecord, woken: Change,
                         rendered: frozenset[str] | None) -> None:
    """``wait_for_progress``, again past each wake-up from this process that says only entries of
    kinds outside ``rendered`` (None: every kind) were written, or a run's beginning here: a read
    then would send nothing. Once a run of the thread began here, it waits as for a run executing
    here (``poll_seconds``): this one, or one before it on the thread, whose end wakes it."""
    while await wait_for_progress(ctx.manager, run, ctx.worker.name, woken) and woken.said_none_of(rendered):
        if woken.says(BEGAN):
            run = dataclasses.replace(run, status=RUNNING, worker=ctx.worker.name)
        woken = ctx.progress.following(run.thread_id, woken)


async def _events(ctx: ApiContext, run: RunRecord, modes: list[str], cursor: Cursor | None,
                  cancel_on_disconnect: bool, live_after: int,
                  queued: Change | None = None) -> AsyncIterator[dict[str, Any]]:
    yield {"event": "metadata", "data": json.dumps({"run_id": run.run_id, "thread_id": run.thread_id,
                                                    "attempt": run_facts.attempt(run)})}
    steps: dict[int, Any] = {}
    trail_modes = [mode for mode in modes if mode in STREAM_MODES]
    rendered = _rendered(trail_modes)
    try:
        if queued is not None and run.after_seq is None:  # not begun when added: no read finds anything yet
            await _wait_for_news(ctx, run, queued, rendered)
        while True:
            woken = ctx.progress.changed(run.thread_id)
            read = functools.partial(_read, ctx, run, trail_modes, cursor, steps, live_after)
            try:
                run, cursor, entries, steps, logged = (read() if ctx.reads_on_loop
                                                       else await offload.to_thread(read))
            except UnknownRunError:  # rolled back meanwhile: the run and what it wrote are gone
                run = dataclasses.replace(run, status=ROLLED_BACK)
                break
            waiting = False  # on a node whose checkpoint is not saved yet: sent on a later read
            for item in merged(_pending(entries, trail_modes, cursor), logged):
                if isinstance(item, LiveEvent):
                    live_after = item.n
                    if item.mode in modes:
                        yield {"event": item.event, "id": _id(cursor, live_after), "data": item.data}
                    continue
                entry, mode, index = item
                data = _render(mode, entry, steps)
                if data is NOT_SAVED_YET and not run.ended:
                    waiting = True
                    break
                cursor = (entry.seq, index)
                if data is not None and data is not NOT_SAVED_YET:
                    yield {"event": mode, "id": _id(cursor, live_after), "data": json_text(data)}
            if run.ended and not waiting:
                break
            await _wait_for_news(ctx, run, woken, None if waiting else rendered)
        for event in _closing(run, cursor, live_after):
            yield event
    finally:
        if cancel_on_disconnect and not run.ended and run.status != ROLLED_BACK:
            ctx.runs.request_cancel(run.thread_id, run.run_id, ctx.manager.clock())  # no await: cancelled
            ctx.worker.wake()


def _rendered(modes: list[str]) -> frozenset[str] | None:
    """The kinds of trail entry the trail ``modes`` may send an event for (None: every kind)."""
    if "events" in modes:
        return None
    return frozenset().union(*(RENDERED[mode] for mode in modes))


def _id(cursor: Cursor | None, live_after: int) -> str:
    """An event's id: the trail's cursor, and the live log's once an event of it has been sent."""
    seq, index = cursor if cursor is not None else (0, len(STREAM_MODES) - 1)
    return f"{seq}-{index}-{live_after}" if live_after else f"{seq}-{index}"


def _closing(run: RunRecord, cursor: Cursor | None, live_after: int) -> list[dict[str, Any]]:
    """The ended run's last events past ``cursor``: a failed run's ``error`` (``{"error": the
    exception's type name, "message": ...}``, from the run's record), then ``end`` (a client that
    rejoins after it gets no event, and the stream closes); their ids carry the live log's
    cursor ``live_after`` as every other event's do."""
    last = run.end_seq or (cursor or (0, 0))[0]
    events: list[dict[str, Any]] = []
    if run.status == ERROR and (cursor is None or cursor < (last, ERROR_INDEX)):
        events.append({"event": "error", "id": _id((last, ERROR_INDEX), live_after),
                       "data": json_text(error_body(run.error))})
    if cursor is None or cursor < (last, END_INDEX):
        events.append({"event": "end", "id": _id((last, END_INDEX), live_after),
                       "data": json.dumps({"run_id": run.run_id, "status": run.status})})
    return events


def error_body(error: str | None) -> dict[str, str]:
    """A failed run's error as LangGraph's server sends it: ``{"error": the exception's type name,
    "message": what it said}`` (the run records ``"<Type>: <message>"``; an error GraphARC raised
    before any node ran may have no type name, and is a ``RunError``)."""
    text = error or "the run failed"
    name, sep, message = text.partition(": ")
    if sep and name.isidentifier():
        return {"error": name, "message": message}
    return {"error": "RunError", "message": text}


def _pending(entries: list[AuditEntry], modes: list[str],
             cursor: Cursor | None) -> Iterator[tuple[AuditEntry, str, int]]:
    """Each (entry, mode, the mode's index) past ``cursor``, in the order their events are sent
    (none before the run has begun, when there is no cursor)."""
    if cursor is None:
        return
    indexed = [(mode, STREAM_MODES.index(mode)) for mode in modes]
    for entry in entries:
        for mode, index in indexed:
            if (entry.seq, index) > cursor:
                yield entry, mode, index


Read = tuple[RunRecord, Cursor | None, list[AuditEntry], dict[int, Any], list[LiveEvent]]


def _read(ctx: ApiContext, run: RunRecord, modes: list[str], cursor: Cursor | None, steps: dict[int, Any],
          live_after: int) -> Read:
    """In one trip to a thread: the run's record as it stands, the stream's cursor (the run's start
    if it had none and the run has begun), the run's trace entries past it in the trail ``modes``
    and the checkpoints that render them, then its live events past ``live_after``."""
    run = refreshed(ctx.runs, run)
    if run.after_seq is None:
        return run, cursor, [], steps, []
    cursor = cursor or (run.after_seq, len(STREAM_MODES) - 1)  # every mode of the entry before it sent
    entries = _unsent(ctx.manager, run, modes, cursor) if modes else []  # only live modes: no trail read
    if "updates" in modes:  # an open plain interrupt's ``__interrupt__`` shows its whole value
        entries = interrupts.with_payloads(ctx.manager, run.thread_id, entries)
    steps = _steps_for(ctx.sessions, run.thread_id, entries, steps, "values" in modes)
    if "values" in modes:
        steps = _turn_states(ctx.manager, run, entries, steps)
    return run, cursor, entries, steps, live_events(ctx.runs, run, live_after)  # after the trail: see merged


def _turn_states(manager: SessionManager, run: RunRecord, entries: list[AuditEntry],
                 steps: dict[int, Any]) -> dict[int, Any]:
    """``steps`` with the states the ``values`` mode sends beside the nodes', as LangGraph does: a
    start's input applied (``INPUT_STATE``: the checkpoint its first node ran from; once the run
    has ended with no node done, the thread's newest) and the state a pause left
    (``PAUSED_STATE``: the thread's newest checkpoint, read once its ``asked`` entry is there). The
    newest checkpoint is the run's own while no later turn of the thread has begun."""
    starts = [e for e in entries if _is_start(e)]
    nodes = [e for e in entries if e.kind == AuditKind.NODE and e.step is not None]
    steps = dict(steps)
    if starts and (firsts := [e for e in nodes if e.seq > starts[0].seq]):
        steps[INPUT_STATE] = steps.get((firsts[0].step or 0) - 1)
    newest_needed = (starts and run.ended and INPUT_STATE not in steps) or any(
        e.kind == AuditKind.ASKED for e in entries)
    if newest_needed:
        newest = manager.history(run.thread_id, limit=1)
        steps.setdefault(INPUT_STATE, newest[0] if newest else None)
        steps[PAUSED_STATE] = newest[0] if newest else None
    return steps


def _is_start(entry: AuditEntry) -> bool:
    """Whether ``entry`` is a start turn's claim of its thread (the run's input is applied next)."""
    return entry.kind == AuditKind.CLAIMED and entry.detail.get("turn") == "start"


def _unsent(manager: SessionManager, run: RunRecord, modes: list[str], cursor: Cursor) -> list[AuditEntry]:
    """The run's trace entries that may have events in ``modes`` past ``cursor``: read from the
    cursor's own entry (if some of its modes are unsent) on, never the whole trail again."""
    sent_whole = cursor[1] >= max(STREAM_MODES.index(mode) for mode in modes)
    after = max(run.after_seq or 0, cursor[0] if sent_whole else cursor[0] - 1)
    return [e for e in manager.audit(run.thread_id, after) if run.end_seq is None or e.seq <= run.end_seq]


def _steps_for(sessions: Sessions, thread_id: str, entries: list[AuditEntry], known: dict[int, Any],
               values: bool) -> dict[int, Any]:
    """Checkpoints by step for rendering ``entries`` (``values``: in the values mode too): those the
    thread's live turn here last scanned when they hold what the node entries need, else read again
    when one is a node (what it wrote is a task result of the checkpoint before it, filled in as its
    writes are saved, so a copy read earlier can lack it), else those read before (other entries
    need none). Only the checkpoints from the step before the oldest node entry's on are read."""
    nodes = [e for e in entries if e.kind == AuditKind.NODE and e.step is not None]
    if not nodes:
        return known
    scanned = _scanned_steps(sessions, thread_id, nodes, values)
    if scanned is not None:
        return scanned
    return _snapshots_by_step(sessions.manager, thread_id, min(e.step or 0 for e in nodes) - 1)


def _scanned_steps(sessions: Sessions, thread_id: str, nodes: list[AuditEntry],
                   values: bool) -> dict[int, Any] | None:
    """The checkpoints rendering ``nodes`` as the thread's live turn here last scanned them, or None
    if it holds one of them without the node's result (or not at all)."""
    steps: dict[int, Any] = {}
    for entry in nodes:
        step = entry.step or 0
        before = sessions.scanned_at(thread_id, step - 1)
        if _result_of(entry, before) is None:
            return None
        steps[step - 1] = before
        if values:
            if (after := sessions.scanned_at(thread_id, step, values=True)) is None:
                return None
            steps[step] = after
    return steps


def _snapshots_by_step(manager: SessionManager, thread_id: str, since_step: int) -> dict[int, Any]:
    """The thread's checkpoints from superstep ``since_step`` on, by step (the newest of each)."""
    steps: dict[int, Any] = {}
    for snapshot in manager.history(thread_id, since_step=since_step):
        steps.setdefault(step_of(snapshot), snapshot)
    return steps


def _render(mode: str, entry: AuditEntry, steps: dict[int, Any]) -> Any:
    """What one trace entry says in ``mode`` (None when it says nothing there; ``NOT_SAVED_YET``
    for a node's values before the checkpoint of its step is on disk)."""
    if mode == "events":
        if entry.kind == AuditKind.NODE:
            return {"event": "on_chain_end", "name": entry.node, "run_id": str(entry.seq),
                    "data": {"output": _node_update(entry, steps)},
                    "metadata": {"step": entry.step, "at": entry.at}}
        return {"event": "on_custom_event", "name": f"grapharc.{entry.kind}", "run_id": str(entry.seq),
                "data": entry.detail, "metadata": {"node": entry.node, "at": entry.at}}
    if entry.kind == AuditKind.ASKED and mode in ("updates", "values"):
        detail = entry.detail
        shown = detail.get("value", detail.get("question"))
        asked = {"__interrupt__": [{"id": detail.get("approval"), "value": shown}]}
        if mode == "updates":
            return asked
        paused = steps.get(PAUSED_STATE)
        return {**dict(paused.values), **asked} if paused is not None else NOT_SAVED_YET
    if mode == "values" and _is_start(entry):
        applied = steps.get(INPUT_STATE)
        return dict(applied.values) if applied is not None else NOT_SAVED_YET
    if entry.kind != AuditKind.NODE or entry.step is None:
        return None
    if mode == "updates":
        return {entry.node: _node_update(entry, steps)}
    after = steps.get(entry.step)
    return dict(after.values) if after is not None else NOT_SAVED_YET


def _node_update(entry: AuditEntry, steps: dict[int, Any]) -> dict[str, Any]:
    """What the node wrote, from the task result of the checkpoint it ran from."""
    return dict(_result_of(entry, steps.get((entry.step or 0) - 1)) or {})


def _result_of(entry: AuditEntry, before: Any) -> dict[str, Any] | None:
    """The node's result in the checkpoint it ran from (None: not there, or not saved yet)."""
    for task in getattr(before, "tasks", ()):
        if task.name == entry.node and isinstance(task.result, dict):
            return task.result
    return None
