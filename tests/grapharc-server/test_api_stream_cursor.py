"""What a run's stream reads, and when (real SQLite stores and the worker loop, in this process):
it reads the thread's trail from its cursor on (a rejoin at an event id does not re-read the
entries before it, and a stream with nothing left to send reads no checkpoints, while a node
entry is always rendered from checkpoints read after it); it polls a run this process executes
only as a fallback, being woken by the run's progress."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar
from uuid import uuid4

import pytest
from api_graphs import RELAY

import grapharc.server.api.streaming as streaming
from grapharc.runs.records import PENDING, RUNNING, RunRecord
from grapharc.server.api.context import ApiContext, open_context
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.streaming import cursor_of, live_cursor_of, poll_seconds, sse_response
from grapharc.testing.thread_trips import thread_trips


class TrailReads:
    """What a stream asked the session manager for: the ``after`` of each audit read, and how
    often it read the thread's checkpoint history, with which window."""

    def __init__(self, ctx: ApiContext) -> None:
        self.afters: list[int] = []
        self.histories = 0
        self.windows: list[dict[str, Any]] = []
        audit, history = ctx.manager.audit, ctx.manager.history

        def audit_spy(thread_id: str, after: int = 0) -> Any:
            self.afters.append(after)
            return audit(thread_id, after)

        def history_spy(thread_id: str, **window: Any) -> Any:
            self.histories += 1
            self.windows.append(window)
            return history(thread_id, **window)

        ctx.manager.audit = audit_spy  # type: ignore[method-assign]
        ctx.manager.history = history_spy  # type: ignore[method-assign]


T = TypeVar("T")


STUCK_SECONDS = 150.0
"""When a scenario still runs after this long, the stacks of every task are printed (a hang's
cause is in a task's stack; pytest-timeout prints only the threads')."""


def _print_tasks() -> None:
    print(f"--- still running after {STUCK_SECONDS} s: every task's stack ---", file=sys.stderr)
    for task in asyncio.all_tasks():
        task.print_stack(file=sys.stderr)


def with_worker(tmp_path: Path, scenario: Callable[[ApiContext], Awaitable[T]]) -> T:
    """Run ``scenario`` against an API context over ``tmp_path`` whose worker loop is started."""
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])

    async def driven() -> T:
        ctx.worker.start()
        stuck = asyncio.get_running_loop().call_later(STUCK_SECONDS, _print_tasks)
        try:
            return await scenario(ctx)
        finally:
            await ctx.aclose()
            stuck.cancel()

    return asyncio.run(driven())


async def _queued_relay_run(ctx: ApiContext, release: Path, *, released: bool = True,
                            modes: tuple[str, ...] = ("events",)) -> RunRecord:
    """A relay run queued for the worker loop, streamed in ``modes``: three nodes, none waiting, or
    where not ``released`` the middle one waiting for ``release`` to appear."""
    if released:
        release.touch()
    thread = (await asyncio.to_thread(ctx.manager.create, RELAY)).thread_id
    now = time.time()
    run = RunRecord(run_id=uuid4().hex, thread_id=thread, assistant_id=RELAY,
                    request={"kind": "start", "input": {"release_file": str(release)}}, created_at=now,
                    updated_at=now, stream_modes=modes)
    await asyncio.to_thread(ctx.runs.add, run, exclusive=True)
    ctx.worker.wake()
    return run


async def _ended_relay_run(ctx: ApiContext, release: Path) -> RunRecord:
    """A relay run the worker loop has driven to its end."""
    run = await _queued_relay_run(ctx, release)
    thread = run.thread_id
    while not (run := await asyncio.to_thread(ctx.runs.get, thread, run.run_id)).ended:
        await asyncio.sleep(0.05)
    return run


async def _event_ids(ctx: ApiContext, run: RunRecord, last_event_id: str | None) -> list[str]:
    response = sse_response(ctx, run, ["events"], cursor_of(last_event_id), cancel_on_disconnect=False,
                            live_after=live_cursor_of(last_event_id))
    events = [event async for event in response.body_iterator]
    return [event["id"] for event in events if isinstance(event, dict) and "id" in event]


def test_a_rejoined_stream_reads_only_the_trail_past_its_cursor(tmp_path: Path) -> None:
    async def scenario(ctx: ApiContext) -> None:
        run = await _ended_relay_run(ctx, tmp_path / "release")
        every = await _event_ids(ctx, run, None)
        reads = TrailReads(ctx)
        assert await _event_ids(ctx, run, every[1]) == every[2:]
        assert reads.afters == [int(every[1].split("-")[0])]
        assert await _event_ids(ctx, run, every[-1]) == []
        assert reads.histories == 1  # by the first rejoin; the one with nothing left read none

    with_worker(tmp_path, scenario)


def test_a_run_executing_here_is_polled_slowly_and_others_often() -> None:
    run = RunRecord(run_id="r", thread_id="t", assistant_id=RELAY, request={}, created_at=0.0,
                    updated_at=0.0)
    here = dataclasses.replace(run, status=RUNNING, worker="me")
    assert poll_seconds(here, "me") == streaming.LOCAL_POLL_SECONDS > streaming.POLL_SECONDS
    assert poll_seconds(dataclasses.replace(here, worker="elsewhere"), "me") == streaming.POLL_SECONDS
    assert poll_seconds(dataclasses.replace(run, status=PENDING), "me") == streaming.POLL_SECONDS


def test_a_stream_of_a_run_executing_here_is_carried_to_its_end_by_the_runs_progress(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streaming, "LOCAL_POLL_SECONDS", 3600)  # no fallback poll comes to the rescue
    reads: list[str] = []

    async def scenario(ctx: ApiContext) -> list[str]:
        get, arun = ctx.runs.get, ctx.manager.arun

        def get_spy(thread_id: str, run_id: str) -> RunRecord:
            reads.append(run_id)
            return get(thread_id, run_id)

        async def late_turn(*args: Any, **kwargs: Any) -> Any:
            await asyncio.sleep(0.5)  # the turn claims the thread well after the run began
            return await arun(*args, **kwargs)

        ctx.runs.get = get_spy  # type: ignore[method-assign]
        ctx.manager.arun = late_turn  # type: ignore[method-assign]
        run = await _queued_relay_run(ctx, tmp_path / "release")
        return await asyncio.wait_for(_event_ids(ctx, run, None), timeout=120)  # bounds a hang

    ids = with_worker(tmp_path, scenario)
    assert len(ids) == 10  # claimed, the three nodes' starts (live) and ends, the run, completed, the end
    # one read at the start and at most one per wake-up (the run begun, the claim, three node
    # starts, three nodes, the run recorded, the turn ended, the run ended); no polling while the
    # turn was late
    assert len(reads) <= 11, len(reads)


def test_a_node_entry_is_rendered_from_checkpoints_read_after_it_was_recorded(tmp_path: Path) -> None:
    async def scenario(ctx: ApiContext) -> None:
        run = await _ended_relay_run(ctx, tmp_path / "release")
        last_node = [e for e in ctx.manager.audit(run.thread_id) if e.kind == "node"][-1:]
        read_earlier = {step: "read before the node's writes were saved" for step in range(-1, 10)}
        reads = TrailReads(ctx)
        steps = streaming._steps_for(ctx.sessions, run.thread_id, last_node, read_earlier, True)
        assert reads.histories == 1 and steps is not read_earlier
        assert reads.windows == [{"since_step": last_node[0].step - 1}]  # not the whole history
        assert min(steps) == last_node[0].step - 1

    with_worker(tmp_path, scenario)


def test_a_node_of_a_live_turn_here_is_rendered_from_the_turns_own_scan_without_a_read(
        tmp_path: Path) -> None:
    """The turn's audit scan has just prepared the checkpoints a woken stream needs; reading them
    again was a tenth of the server's CPU under load. What the stream sends is the same either way.
    (The scans prepare the state after a node, which only ``values`` renders, for a run streamed in it.)"""
    release = tmp_path / "release"

    async def scenario(ctx: ApiContext) -> tuple[dict[str, Any], ...]:
        # the turn stays live after the first leg: the middle leg waits for the release file
        run = await _queued_relay_run(ctx, release, released=False, modes=("events", "values"))
        while not (nodes := [e for e in ctx.manager.audit(run.thread_id) if e.kind == "node"]):
            await asyncio.sleep(0.02)
        reads = TrailReads(ctx)
        live = streaming._steps_for(ctx.sessions, run.thread_id, nodes, {}, True)
        assert reads.histories == 0  # from the scan, not read again
        durable = streaming._snapshots_by_step(ctx.manager, run.thread_id, nodes[0].step - 1)
        rendered = [{mode: streaming._render(mode, nodes[0], steps) for mode in streaming.STREAM_MODES}
                    for steps in (live, durable)]
        release.touch()
        while not (await asyncio.to_thread(ctx.runs.get, run.thread_id, run.run_id)).ended:
            await asyncio.sleep(0.02)
        reads.histories = 0
        streaming._steps_for(ctx.sessions, run.thread_id, nodes, {}, True)
        assert reads.histories == 1  # the turn ended: what it scanned is gone, the checkpoints are read
        return tuple(rendered)

    live, durable = with_worker(tmp_path, scenario)
    assert live == durable
    assert live["updates"] == {"first_leg": {"legs": ["first"]}}
    assert live["values"]["legs"] == ["first"]


def test_a_scanned_checkpoint_without_the_nodes_result_is_read_again(tmp_path: Path) -> None:
    async def scenario(ctx: ApiContext) -> int:
        run = await _ended_relay_run(ctx, tmp_path / "release")
        nodes = [e for e in ctx.manager.audit(run.thread_id) if e.kind == "node"][:1]
        early = ctx.manager.history(run.thread_id, since_step=nodes[0].step - 1)[-1]  # the step before
        lacking = early._replace(tasks=tuple(task._replace(result=None) for task in early.tasks))
        ctx.manager.scanned.keep(run.thread_id, [lacking])
        reads = TrailReads(ctx)
        steps = streaming._steps_for(ctx.sessions, run.thread_id, nodes, {}, False)
        assert streaming._node_update(nodes[0], steps) == {"legs": ["first"]}
        return reads.histories

    assert with_worker(tmp_path, scenario) == 1


def test_a_nodes_values_read_before_its_checkpoint_was_saved_are_sent_once_it_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by CI: the audit scan can record a node before LangGraph saves its step's checkpoint,
    and a stream reading in between skipped the node's ``values`` event for good. Played here by
    a first read that still finds the run running and lacks the last node's checkpoint."""
    steps_for, first = streaming._steps_for, [True]

    async def scenario(ctx: ApiContext) -> tuple[list[int], list[str]]:
        run = await _ended_relay_run(ctx, tmp_path / "release")
        rendered = [e.seq for e in ctx.manager.audit(run.thread_id) if e.kind in ("claimed", "node")]
        last_step = [e.step for e in ctx.manager.audit(run.thread_id) if e.kind == "node"][-1]
        refresh = ctx.runs.refreshed  # type: ignore[attr-defined]  # the SQL stores' own

        def early_refreshed(seen: RunRecord) -> RunRecord:
            record = refresh(seen)
            return dataclasses.replace(record, status=RUNNING) if first[0] else record

        def early_steps(*args: Any) -> dict[int, Any]:
            found = steps_for(*args)
            if first[0]:
                first[0] = False
                found = {step: snapshot for step, snapshot in found.items() if step != last_step}
            return found

        monkeypatch.setattr(ctx.runs, "refreshed", early_refreshed)
        monkeypatch.setattr(streaming, "_steps_for", early_steps)
        response = sse_response(ctx, run, ["values"], None, cancel_on_disconnect=False)
        events = [event async for event in response.body_iterator]
        return rendered, [event["id"] for event in events if isinstance(event, dict) and "id" in event]

    rendered, ids = with_worker(tmp_path, scenario)
    assert not first[0]  # the early read happened
    trail_ids = [event_id.split("-")[:2] for event_id in ids]  # without the live log's cursor
    assert trail_ids[:-1] == [[str(seq), "0"] for seq in rendered]  # the input, then each node's state
    assert trail_ids[-1][1] == "4"  # the end


def test_a_stream_over_a_store_that_cannot_tell_of_writes_waits_only_on_this_process(
        tmp_path: Path) -> None:
    asked: list[str] = []

    async def scenario(ctx: ApiContext) -> list[str]:
        assert ctx.manager.changes is None  # SQLite cannot tell of another process's writes

        async def store_wait(thread_id: str, timeout: float) -> bool:
            asked.append(thread_id)
            return False

        ctx.manager.wait_for_change = store_wait  # type: ignore[method-assign]
        run = await _queued_relay_run(ctx, tmp_path / "release")
        return await asyncio.wait_for(_event_ids(ctx, run, None), timeout=120)  # bounds a hang

    assert len(with_worker(tmp_path, scenario)) == 10  # as in the test above
    assert asked == []  # no store wait (a task per wait) beside the wake-up and the poll


@pytest.mark.parametrize(("on_loop", "expected_trips"), [(True, 0), (False, 1)])
def test_a_stream_reads_the_run_and_its_trail_on_the_loop_over_sqlite_else_in_one_trip_to_a_thread(
        tmp_path: Path, on_loop: bool, expected_trips: int) -> None:
    """Over SQLite (every store says its reads may run on the loop) a read costs no trip to a thread;
    a store that does not (PostgreSQL's) is read in one trip per read."""
    async def scenario(ctx: ApiContext) -> tuple[list[str], list[str]]:
        assert ctx.reads_on_loop  # SQLite's stores
        ctx.reads_on_loop = on_loop
        run = await _ended_relay_run(ctx, tmp_path / "release")
        every = await _event_ids(ctx, run, None)
        with thread_trips() as trips:
            return await _event_ids(ctx, run, every[2]), trips.names()

    sent, trips = with_worker(tmp_path, scenario)
    assert len(sent) == 7  # the first node's end, the third's start, four entries' events and the end
    assert len(trips) == expected_trips, trips  # the run's record, its unsent entries and their checkpoints


@pytest.mark.parametrize("sent", ["9223372036854775808-0", "99999999999999999999999-1", "1" * 5000 + "-0",
                                  "5-5", "5-99", "\u0663-0", "-1-0", "1-"])
def test_a_last_event_id_this_server_never_sent_is_a_422_not_a_store_error(sent: str) -> None:
    """Found by the HTTP fuzz suite: a seq past 64 bits failed the store's read (the stream was cut
    off mid-body) and one of thousands of digits failed ``int()`` (a 500)."""
    with pytest.raises(ApiProblem) as refused:
        cursor_of(sent)

    assert refused.value.status == 422 and "is not an id this server sent" in str(refused.value)
    assert cursor_of("9223372036854775807-2") == (2**63 - 1, 2)
