"""Driving one claimed turn: pass after pass through the graph until the thread pauses or ends.

A pass streams the governed graph (``durability="sync"``: a superstep is on disk
before the next starts) with the lease's heartbeat running; after each chunk the lease
is checked and newly saved node completions go to the audit trail. After each pass
the thread is settled (``grapharc.session.settle``) and either continues or the turn
ends, writing the status and any new approval requests under the lease's token.
``Turn`` is the sync driver; ``AsyncTurn`` does the same on the event loop with no
thread of its own (store calls go through ``grapharc.stores.offload``, a pool no graph node waits
in). Its scan after a chunk reads through the async checkpointer, queued behind the chunk's
writes on the same connection (a read elsewhere could miss them; core's SQLite saver runs the
whole scan, and the recording of what it found, in one trip to its connection's thread,
``wrapped_saver.in_one_trip``: a trip to the store pool less per node); settling after a pass, whose
writes are all saved by then, reads through the sync one in the same trip to a thread as its
store calls (each async checkpointer read is a trip of its own). A scan names the tasks of the
checkpoints it reads from their saved tuples, without LangGraph preparing snapshots, the newest
left unnamed while no write is saved on it (``history.scan_window``); where the turn's options
say a reader renders values from its scans, each is named with its values too. A turn's runs answer every
``ask`` with a durable approval (``grapharc.decisions.approval``): the thread pauses on it like on an
``interrupt()``. An ``on_update`` subscriber sees each node's writes once they are saved, and an
``on_record`` watcher is called after each write to the audit trail (nodes, runs, the ending),
by ``AsyncTurn`` always on the event loop's thread (a watcher that sets an ``asyncio.Event``
from another thread can lose the wake-up); one that raises is dropped, never the turn. A turn
given a ``budget`` runs every pass under the stricter of it and the graph's (thread-wide) budget;
one given ``breakpoints`` passes them to every pass and pauses where one stopped it
(``grapharc.session.breakpoints``); a client's goto and update go in its first pass
(``grapharc.session.directives``); one they do not fit fails.
An ``AsyncTurn`` given a ``live`` sink (``grapharc.session.live``) streams each pass in the sink's
modes too and hands it every chunk but the top graph's updates, flushing it before recording a node.
one given a ``caller`` config runs every pass with it beneath the turn's own
(``grapharc.runtime.caller_config``): its declared configurable keys, context, tags, metadata and
recursion limit reach the nodes, never in place of the thread, budget or turn the turn sets.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, StateSnapshot

from grapharc.runtime.budget import RUN_BUDGET_KEY, Budget
from grapharc.runtime.caller_config import CallerConfig
from grapharc.runtime.compiled import CompiledGraphARC
from grapharc.runtime.context import DURABLE_ASKS
from grapharc.runtime.directed import directed
from grapharc.runtime.wrapped_saver import in_one_trip, innermost
from grapharc.session.approvals import Hold, request
from grapharc.session.audit import NodeRun, completed_runs
from grapharc.session.cancels import Cancel, Cancels
from grapharc.session.contracts import SessionStore
from grapharc.session.errors import LeaseLostError, NoProgressError
from grapharc.session.fencing import Leases
from grapharc.session.history import ascan_window, scan_window, step_of
from grapharc.session.lease import AsyncHeartbeat, Heartbeat, Lease
from grapharc.session.live import TRAIL_MODE, GuardedSink
from grapharc.session.records import (
    ANSWER_KEY,
    APPROVED,
    COMPLETED,
    FAILED,
    FORK,
    INTERRUPT,
    OPEN,
    PAUSED,
    Approval,
    AuditKind,
    Session,
)
from grapharc.session.registry import RegisteredGraph
from grapharc.session.rollback import discard_run_writes, reopened
from grapharc.session.scanned import ScannedCheckpoints
from grapharc.session.settle import CONTINUE, Plan, settle
from grapharc.session.standing import Standing, standing
from grapharc.session.subscribers import (
    CLAIM_ENTRIES,
    NODE_ENTRIES,
    RUN_ENTRIES,
    GuardedSubscriber,
    OnRecord,
    OnUpdate,
)
from grapharc.session.turn_options import NO_OPTIONS, TurnOptions
from grapharc.stores import offload

_T = TypeVar("_T")

TURN_KEY = "grapharc_session_turn"


def _position(snapshot: StateSnapshot | Standing) -> tuple[str, tuple[str, ...]]:
    """Where a thread stands, to notice a continuation that went nowhere."""
    interrupts = tuple(sorted(i.id for i in getattr(snapshot, "interrupts", ())))
    return snapshot.config["configurable"].get("checkpoint_id", ""), interrupts


def _starts_fresh(lease: Lease, snapshot: StateSnapshot) -> bool:
    """True if a start turn's input never reached the checkpoint (so it must be sent again)."""
    if lease.turn.get("kind") not in ("start", FORK):
        return False
    turn_id: object = lease.turn["id"]
    return (snapshot.metadata or {}).get(TURN_KEY) != turn_id


class _TurnBase:
    """State shared by both drivers: the lease, the graph, the config and the audit watermark."""

    def __init__(self, store: SessionStore, leases: Leases, graph: RegisteredGraph,
                 compiled: CompiledGraphARC, lease: Lease, clock: Callable[[], float],
                 on_update: OnUpdate | None, budget: Budget | None = None,
                 on_record: OnRecord | None = None, reader: CompiledGraphARC | None = None, *,
                 scanned: ScannedCheckpoints | None = None, audited: int | None = None,
                 cancels: Cancels | None = None, options: TurnOptions = NO_OPTIONS) -> None:
        self.store = store
        self.leases = leases
        self.graph = graph
        self.compiled = compiled
        self.reader = reader or compiled  # the graph over a sync checkpointer: how settling reads
        self.lease = lease
        self.clock = clock
        self.subscriber = GuardedSubscriber(on_update, lease.thread_id, on_record)
        self.live = GuardedSink(options.live, lease.thread_id)
        self.thread: RunnableConfig = {"configurable": {"thread_id": lease.thread_id}}
        tightened = {RUN_BUDGET_KEY: budget} if budget is not None else {}
        run = {"run_id": options.run_id} if options.run_id is not None else {}  # on each checkpoint
        own: RunnableConfig = {"configurable": {"thread_id": lease.thread_id, DURABLE_ASKS: True,
                                                **tightened},
                               "metadata": {TURN_KEY: lease.turn.get("id", ""), **run}}
        caller = options.caller or CallerConfig()
        self.config: RunnableConfig = caller.runnable(graph.builder.config_schema, own)
        context = caller.context_for(graph.builder.context_schema)
        self.context: dict[str, Any] = {"context": context} if context is not None else {}
        self.cancels = cancels
        self.scanned = scanned if scanned is not None else ScannedCheckpoints()
        self.audited = audited  # the audit watermark; None: read from the store on first use
        self.snapshot: Any = None
        self.found: StateSnapshot | None = None  # the checkpoint the turn's first pass starts from, if read
        self.breakpoints = stops = options.breakpoints
        self.stream_options = stops.stream_options(graph.gates) if stops is not None else {}
        self.directive = options.directive
        self.origin: str | None = None  # the checkpoint a fork's first pass starts from
        self.values_read = options.values_read

    def start_plan(self) -> Plan:
        """The first move of a fresh start turn: send its input (a fork's, None: carry on from its
        checkpoint as it stands, from which its first pass starts)."""
        if self.lease.turn.get("kind") == FORK:
            self.origin = self.lease.turn["checkpoint_id"]
        return Plan(CONTINUE, self.lease.turn["input"])

    def _pass_config(self) -> RunnableConfig:
        """The config of the next pass: from the newest checkpoint, but a fork's first pass from the
        checkpoint it forks (LangGraph then saves the fork's checkpoints after that one)."""
        origin, self.origin = self.origin, None
        if origin is None:
            return self.config
        return {**self.config, "configurable": {**self.config["configurable"], "checkpoint_ns": "",
                                                "checkpoint_id": origin}}

    @contextmanager
    def _holding(self) -> Iterator[None]:
        """The lease counts as held while a driver drives it; the record watcher hears first of
        the entry the lease's claim wrote (claimed, decided or reclaimed). The checkpoint the turn
        read before driving is the one it ``found`` (what a rollback returns to)."""
        self.leases.held[self.lease.thread_id] = self.lease
        self.found = self.snapshot
        self.subscriber.recorded(CLAIM_ENTRIES)
        try:
            yield
        finally:
            self.leases.held.pop(self.lease.thread_id, None)
            self.scanned.forget(self.lease.thread_id)

    def _where(self) -> tuple[str, tuple[str, ...]] | None:
        """Where the thread stood at its last settling (None before the first)."""
        return _position(self.snapshot) if self.snapshot is not None else None

    def _moved_on(self, before: tuple[str, tuple[str, ...]] | None, plan: Plan) -> Plan:
        """``plan``, the thread settled after a pass that started at ``before``; a continuation
        that left the thread where it was stops the turn instead of looping."""
        if plan.kind == CONTINUE and _position(self.snapshot) == before:
            raise NoProgressError(f"thread {self.lease.thread_id} did not move on continuing; "
                                  "stopped instead of looping")
        return plan

    def _after_pass(self, before: tuple[str, tuple[str, ...]] | None, plan: Plan) -> Plan:
        """``plan`` after a pass that started at ``before``: a turn with breakpoints whose pass
        stopped with nodes due and nothing to answer stopped at one, and pauses there."""
        plan = self._moved_on(before, plan)
        if self.breakpoints is not None and plan.kind == CONTINUE and plan.payload is None:
            return Plan(PAUSED)
        return plan

    def _directed(self, plan: Plan) -> Plan:
        """The first ``plan`` carrying the turn's directive (its goto and update), checked where the
        thread stands and recorded on the trail; a plan that does not continue carries none."""
        directive = self.directive
        if directive is None or plan.kind != CONTINUE:
            return plan
        resume = plan.payload.resume if isinstance(plan.payload, Command) else None
        self.snapshot = self.reader.get_state(self.thread)  # a snapshot: settling read less (standing)
        command = directed(self.graph.builder, self.reader, self.snapshot, goto=directive.goto,
                           update=directive.update, resume=resume)
        self.store.record_directive(self.lease, directive.detail(tuple(self.snapshot.next)), self.clock())
        return Plan(CONTINUE, command)

    def _renew(self, lease: Lease) -> bool:
        return self.store.renew(lease, self.clock())

    def _plan(self, approvals: list[Approval]) -> Plan:
        holds = self.graph.holds(self.snapshot)
        return settle(self.snapshot, holds, approvals, self._answered(holds, approvals))

    def _answered(self, holds: list[Hold], approvals: list[Approval]) -> dict[str, Any]:
        """The values plain interrupts were answered with, by approval id, from the trail's
        ``decided`` entries (read only while an interrupt held now has an approved approval)."""
        pending = {hold.key for hold in holds if hold.kind == INTERRUPT}
        if not any(a.hold_key in pending and a.state == APPROVED for a in approvals):
            return {}
        return {entry.detail["approval"]: entry.detail[ANSWER_KEY]
                for entry in self.store.audit(self.lease.thread_id)
                if entry.kind == AuditKind.DECIDED and ANSWER_KEY in entry.detail}

    def _settle(self) -> tuple[Plan, int]:
        """Read where the thread stands (its newest checkpoint's tasks named, no snapshot
        prepared: ``grapharc.session.standing``), record completions, plan (sync); the plan and how
        many completions were new."""
        self.snapshot = standing(self.reader, self.thread)
        new = self._scan(settled=True)  # no pass is running: writes missing now never come
        return self._plan(self.store.approvals(self.lease.thread_id)), new

    def _scan(self, *, settled: bool = False, through: CompiledGraphARC | None = None,
              prepared: bool = False) -> int:
        """Put the node completions saved since the audit watermark on the trail (sync), read
        through ``through`` (the sync ``reader`` by default); how many were new. ``settled``: no
        pass is running (see ``completed_runs``); ``prepared``: every checkpoint of the window
        named with its values (a reader renders them), not only those with a write saved. A scan
        with nothing to record and the watermark where it was writes nothing (the settling after a
        pass that a node's own scan already recorded): every write after it is fenced anyway."""
        if self.audited is None:
            self.audited = self.store.audited_step(self.lease.thread_id)
        graph = through or self.reader
        history = scan_window(graph, self.thread, self.audited, values=prepared)
        runs, resume_at = self._completions(history, self.audited, settled=settled)
        if not runs and resume_at == self.audited:
            return 0
        new = self.store.record_nodes(self.lease, runs, resume_at, self.clock())
        self.audited = resume_at
        return new

    def _completions(self, history: list[Any], since: int, *,
                     settled: bool = False) -> tuple[list[NodeRun], int]:
        """The node completions in ``history`` (read from step ``since``, the audit watermark) and
        the step the next scan starts from; the history is kept for the thread's readers."""
        self.scanned.keep(self.lease.thread_id, history)
        return completed_runs(history, since, settled=settled)

    def _record_run(self) -> bool:
        """Put the run this pass made on the thread's audit trail (it ties the session to its
        trace: run id, attempt, status, stop reason, steps, spend); whether it was written (the
        caller tells the record watcher, on its own thread)."""
        info = self.compiled.last_run
        if info is None or not info.finished:
            return False
        try:
            self.store.record_run(self.lease, dataclasses.asdict(info), self.clock())
        except LeaseLostError:
            return False  # the runner that took the thread over records its own runs
        return True

    def _fail(self, exc: BaseException) -> bool:
        """Record a failed turn, unless the lease went to another runner meanwhile; whether it was
        recorded (the caller tells the record watcher)."""
        try:
            self.store.finish(self.lease, FAILED, self.clock(), error=f"{type(exc).__name__}: {exc}")
        except LeaseLostError:
            return False
        return True

    def _stopped(self, exc: BaseException) -> bool:
        """Record how a turn stopped by ``exc`` ended: cancelled, when someone asked for the cancel
        (``Cancels``), else failed; whether it was recorded (the caller tells the record watcher)."""
        cancel = self.cancels.take(self.lease.thread_id) if (
            self.cancels is not None and isinstance(exc, asyncio.CancelledError)) else None
        return self._fail(exc) if cancel is None else self._cancelled(cancel)

    def _cancelled(self, cancel: Cancel) -> bool:
        """End a turn cancelled on request where its last checkpoint leaves the thread: paused on the
        approvals it waits for, else idle (completed), nodes still due or not; a rollback first
        undoes what ``cancel.run_id`` wrote and answered (``grapharc.session.rollback``) and moves the
        node scan back to the checkpoint left. Unless the lease went to another runner meanwhile;
        whether it was recorded."""
        reopen = self._roll_back(cancel) if cancel.rollback and cancel.run_id is not None else []
        if not cancel.rollback:
            self.snapshot = self.reader.get_state(self.thread)
        approvals = self.store.approvals(self.lease.thread_id)
        plan = self._plan([dataclasses.replace(a, state=OPEN, decided_by=None, decided_at=None)
                           if a.approval_id in reopen else a for a in approvals])
        status = COMPLETED if plan.kind == CONTINUE else plan.kind
        ending = self._ending(plan) if plan.kind != CONTINUE and self.snapshot.created_at else {}
        rewound = step_of(self.snapshot) if cancel.rollback else None
        try:
            self.store.finish(self.lease, status, self.clock(), cancel=cancel.detail(), audited_step=rewound,
                              reopened=reopen, **ending)
        except LeaseLostError:
            return False
        return True

    def _roll_back(self, cancel: Cancel) -> list[str]:
        """Delete the checkpoints ``cancel.run_id`` wrote and its writes on the one the turn found;
        the ids of the approvals it answered that the thread waits on again (to reopen)."""
        saver = self.reader.checkpointer
        saver.delete_for_runs([cancel.run_id])
        self.snapshot = self.reader.get_state(self.thread)
        if cancel.since is None or not discard_run_writes(saver, self.found, self.snapshot):
            return []
        self.snapshot = self.reader.get_state(self.thread)
        answered = {entry.detail["approval"] for entry in self.store.audit(self.lease.thread_id, cancel.since)
                    if entry.kind == AuditKind.DECIDED}
        return reopened(self.store.approvals(self.lease.thread_id), self.graph.holds(self.snapshot), answered)

    def _ending(self, plan: Plan) -> dict[str, Any]:
        """The arguments of ``store.finish`` for a turn ending in ``plan``."""
        now = self.clock()
        fields: dict[str, Any] = {}
        if plan.kind == PAUSED:
            fields["requests"] = [request(hold, self.lease.thread_id, now) for hold in plan.requests]
        if plan.kind == COMPLETED and self.graph.outcome is not None:
            fields["outcome"] = self.graph.outcome(dict(self.snapshot.values))
        return fields


class Turn(_TurnBase):
    """Drives a sync turn under a heartbeat thread."""

    def recovery_plan(self) -> Plan:
        """The first move after taking over a thread: resend a lost input, else settle it."""
        self.snapshot = self.compiled.get_state(self.thread)
        if _starts_fresh(self.lease, self.snapshot):
            return self.start_plan()
        return self.settled()

    def drive(self, plan: Plan) -> None:
        """Run passes until the thread pauses or ends; record the ending under the lease."""
        with self._holding():
            self._drive(plan)

    def _drive(self, plan: Plan) -> None:
        with Heartbeat(self.lease, self._renew) as beat:
            try:
                plan = self._directed(plan)
                while plan.kind == CONTINUE:
                    before = self._where()
                    self._pass(plan.payload, beat)
                    plan = self._after_pass(before, self.settled())
                beat.check()
            except LeaseLostError:
                raise
            except BaseException as exc:
                if self._fail(exc):
                    self.subscriber.recorded()
                raise
        self.store.finish(self.lease, plan.kind, self.clock(), **self._ending(plan))
        self.subscriber.recorded()

    def _pass(self, payload: Any, beat: Heartbeat) -> None:
        try:
            for chunk in self.compiled.stream(payload, self._pass_config(), stream_mode="updates",
                                              durability="sync", **self.stream_options, **self.context):
                beat.check()
                self._record()
                self.subscriber.show(chunk)
        finally:
            if self._record_run():
                self.subscriber.recorded(RUN_ENTRIES)

    def settled(self) -> Plan:
        """Settle the thread as it stands: read its checkpoint, record completions, plan."""
        plan, new = self._settle()
        if new:
            self.subscriber.recorded(NODE_ENTRIES)
        return plan

    def _record(self) -> None:
        if self._scan():
            self.subscriber.recorded(NODE_ENTRIES)


class AsyncTurn(_TurnBase):
    """Drives an async turn on the event loop, its heartbeat an asyncio task."""

    async def recovery_plan(self) -> Plan:
        """Async ``Turn.recovery_plan``."""
        self.snapshot = await self.compiled.aget_state(self.thread)
        if _starts_fresh(self.lease, self.snapshot):
            return self.start_plan()
        return await self.settled()

    async def drive(self, plan: Plan) -> Session:
        """Async ``Turn.drive``; the thread's session as the turn left it (read in the trip that
        records the ending)."""
        with self._holding():
            return await self._drive(plan)

    async def _drive(self, plan: Plan) -> Session:
        async with AsyncHeartbeat(self.lease, self._renew) as beat:
            try:
                if self.directive is not None:  # a trip to a thread only when there is one to apply
                    plan = await offload.to_thread(self._directed, plan)
                while plan.kind == CONTINUE:
                    before = self._where()
                    await self._pass(plan.payload, beat)
                    plan = self._after_pass(before, await self._passed())
                beat.check()
            except LeaseLostError:
                raise
            except BaseException as exc:
                if await offload.to_thread(self._stopped, exc):
                    self.subscriber.recorded()
                raise
        session = await self._stored(self._finished, plan)
        self.subscriber.recorded()
        return session

    def _finished(self, plan: Plan) -> Session:
        """Record the turn's ending in ``plan``; the thread's session after it."""
        return self.store.finish(self.lease, plan.kind, self.clock(), **self._ending(plan))

    async def stop(self, exc: BaseException) -> None:
        """End a turn claimed but never driven, stopped by ``exc`` as ``drive`` ends one: cancelled where
        the thread stands when someone asked (``Cancels``), else failed, kept for a recovery."""
        with self._holding():
            if await offload.to_thread(self._stopped, exc):
                self.subscriber.recorded()

    async def _pass(self, payload: Any, beat: AsyncHeartbeat) -> None:
        live = self.live
        callbacks = live.callbacks()
        base = self._pass_config()
        config: RunnableConfig = {**base, "callbacks": callbacks} if callbacks else base
        try:
            async for part in self.compiled.astream(payload, config, stream_mode=live.stream_mode,
                                                     subgraphs=live.subgraphs, durability="sync",
                                                     **self.stream_options, **self.context):
                beat.check()
                namespace, mode, chunk = live.split(part)
                if namespace or mode != TRAIL_MODE:
                    live.put(namespace, mode, chunk)
                    continue
                await live.flush()  # what the node streamed is kept before the trail says it ended
                await self._record()
                self.subscriber.show(chunk)
        except BaseException:
            await live.flush()
            if await offload.to_thread(self._record_run):
                self.subscriber.recorded(RUN_ENTRIES)  # on the loop, not in the store's thread (see settled)
            raise
        await live.flush()  # the run the pass made is recorded by ``_passed``, with the settling

    async def settled(self) -> Plan:
        """Async ``Turn.settled``, in one trip to a thread."""
        plan, new = await offload.to_thread(self._settle)
        if new:
            self.subscriber.recorded(NODE_ENTRIES)  # on the loop: the watcher may wake the loop's waiters
        return plan

    async def _passed(self) -> Plan:
        """After a pass that ended without raising: put the run it made on the trail and settle
        the thread, in one trip to a thread, and tell the record watcher once."""
        plan, written = await self._stored(self._record_and_settle)
        if written:
            self.subscriber.recorded(written)
        return plan

    def _record_and_settle(self) -> tuple[Plan, frozenset[str]]:
        """``_record_run`` then ``_settle``: the plan, and the kinds of the entries they wrote."""
        recorded = self._record_run()
        plan, new = self._settle()
        written = (RUN_ENTRIES if recorded else frozenset()) | (NODE_ENTRIES if new else frozenset())
        return plan, written

    async def _stored(self, work: Callable[..., _T], *args: Any) -> _T:
        """``work(*args)``, store calls and settling reads, in place where the session store and the
        sync checkpointer allow it, else in a trip to the store pool (``offload.nearby``). Run again
        there after an attempt in place was undone, it starts from the same watermark: a call sets
        ``audited`` only once what it wrote is written, and nothing after that can wait."""
        stores = (self.store, innermost(self.reader.checkpointer))
        return await offload.nearby(stores, work, *args)

    async def _record(self) -> None:
        """Put the node completions the chunk's writes saved on the trail: read and recorded in
        one trip to the checkpointer's thread where it has one (queued behind those writes), else
        a read through the async checkpointer and a trip to the store pool."""
        trip = in_one_trip(self.compiled.checkpointer)
        new = (await trip(self._scan, through=self.compiled, prepared=self.values_read) if trip is not None
               else await self._record_apart())
        if new:
            self.subscriber.recorded(NODE_ENTRIES)

    async def _record_apart(self) -> int:
        """``_record`` through an async checkpointer with no thread of its own; how many were new."""
        if self.audited is None:
            self.audited = await offload.to_thread(self.store.audited_step, self.lease.thread_id)
        history = await ascan_window(self.compiled, self.thread, self.audited, values=self.values_read)
        runs, resume_at = self._completions(history, self.audited)
        new = await offload.to_thread(self.store.record_nodes, self.lease, runs, resume_at, self.clock())
        self.audited = resume_at
        return new
