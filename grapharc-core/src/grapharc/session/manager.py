"""SessionManager: durable sessions kept at one location, driven from any process.

The location (a store URI, ``<scheme>:<location>``, or a bare directory path meaning
the local default store) opens two stores through the stores hook
(``grapharc.session.backends``): a ``SessionStore`` keeps status, the event queue,
approval holds, leases and the audit trail; a ``CheckpointerProvider`` hands out
LangGraph's savers for graph state (``grapharc.session.contracts``). Between a pause
and its answer nothing is alive: no daemon, no waiting thread, no object in memory; a
decision made in another process tomorrow resumes the thread from its stores.

Semantics, in short. A turn is claimed under a lease (``grapharc.session.lease``) and
driven until the thread pauses or ends (``grapharc.session.turns``). Execution is
at-least-once per node: a node interrupted by a crash, or by ``interrupt()``, runs
again from its first line, so side effects belong below ``interrupt()`` or in a node
of their own; the audit trail still records each completed node exactly once. Events
posted to a session are delivered into its ``inbox`` field at its next turn. Every
method has an async twin (``arun``, ``aresume``, ...) that drives the turn on the
event loop, so a server needs no thread per session.
"""

from __future__ import annotations

import asyncio
import builtins  # `builtins.list` in annotations: the class below has a method named `list`
import functools
import json
import os
import socket
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from uuid import uuid4

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.types import INTERRUPT
from pydantic import ValidationError

from grapharc.config.values import LEASE_SECONDS
from grapharc.runtime.budget import Budget
from grapharc.runtime.directed import directed
from grapharc.runtime.graph import GraphARC
from grapharc.session.approvals import Approvers, Gate
from grapharc.session.backends import open_backends
from grapharc.session.cancels import Cancels
from grapharc.session.claims import Built, claimed
from grapharc.session.contracts import ChangeNotifier, graph_of
from grapharc.session.directives import Directive
from grapharc.session.errors import SessionError, SessionInputError, UnknownCheckpointError
from grapharc.session.fencing import Leases, fence
from grapharc.session.history import Window, snapshots, step_of, stored_values
from grapharc.session.lease import Lease
from grapharc.session.paused_edits import carry_interrupts, left_paused, plain_open
from grapharc.session.records import (
    APPROVED,
    DECISIONS,
    DECLINED,
    GATE,
    PAUSED,
    Answer,
    Approval,
    AuditEntry,
    DecisionMark,
    Event,
    Session,
)
from grapharc.session.registry import GraphRegistry, RegisteredGraph
from grapharc.session.retention import (
    THREAD_PRUNE_STRATEGIES,
    PruneReport,
    delete_threads,
    keep_latest,
    prune,
    refuse_unprunable,
)
from grapharc.session.scanned import ScannedCheckpoints
from grapharc.session.subscribers import OnRecord, OnUpdate
from grapharc.session.time_travel import as_written, copy_checkpoints, edit_config, picked_node
from grapharc.session.turn_options import NO_OPTIONS, TurnOptions
from grapharc.session.turns import AsyncTurn, Turn
from grapharc.stores import offload

if TYPE_CHECKING:
    from langgraph.store.base import BaseStore

DEFAULT_LEASE_SECONDS = 30.0
MAX_LEASE_SECONDS = LEASE_SECONDS.high
"""A lease is renewed while its runner lives; one longer than a day only delays a takeover."""


def checked_lease(seconds: Any) -> float:
    """``seconds`` as a lease length, refused unless a number in ``LEASE_SECONDS``' range."""
    try:
        if not isinstance(seconds, int | float):
            raise ValueError(f"must be {LEASE_SECONDS.describe()}")
        return LEASE_SECONDS(seconds)
    except ValueError as exc:
        raise SessionError(f"a lease {exc}, got {seconds!r}",
                           hint="the default is 30 seconds; the runner renews it while it works") from None


@dataclass(frozen=True, slots=True)
class _LoopSaver:
    """An event loop's async checkpointer and the context that closes it."""

    saver: BaseCheckpointSaver[Any]
    exits: AsyncExitStack


def _runner_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid4().hex[:6]}"


def _checked_input(input: Mapping[str, Any] | None) -> dict[str, Any]:
    if input is None:
        return {}
    if not isinstance(input, Mapping):
        raise SessionInputError(f"session input must be a dict of state values, got {type(input).__name__}")
    try:
        json.dumps(dict(input))
    except (TypeError, ValueError) as exc:
        raise SessionInputError(
            f"session input must be JSON data, so a recovery can send it again: {exc}") from exc
    return dict(input)


class SessionManager:
    """Create, run, pause, decide, resume, recover, list and prune the sessions kept at ``location``
    (a store URI, or a bare directory path for the local default store); the graphs it compiles
    get ``long_term_store`` as their LangGraph store (a node's ``store``, ``get_store()``)."""

    def __init__(self, location: str | os.PathLike[str], *, lease_seconds: float = DEFAULT_LEASE_SECONDS,
                 runner: str | None = None, clock: Callable[[], float] = time.time,
                 long_term_store: BaseStore | None = None) -> None:
        self.location = location  # where another manager over the same sessions opens them
        self.lease_seconds = checked_lease(lease_seconds)
        self.runner = runner or _runner_name()
        self.clock = clock
        self.store, self.checkpoints = open_backends(location)
        # the store if it can tell of other processes' writes: checked once, a protocol isinstance is slow
        self.changes: ChangeNotifier | None = self.store if isinstance(self.store, ChangeNotifier) else None
        self.graphs = GraphRegistry(long_term_store)
        self.leases = Leases(self.store.holds, reads_on_loop=offload.reads_on_loop(self.store))
        self.WRITES_ON_LOOP = offload.writes_on_loop(self.store, self.checkpoints)
        """Whether a call of its sync methods may run in place on an event loop (``offload.nearby``):
        its session store and checkpoints refuse at once there what would wait."""
        self.scanned = ScannedCheckpoints()  # what live turns here last read: a stream renders from it
        self.cancels = Cancels()  # asked of the turns this process drives (``grapharc.session.cancels``)
        self._saver: BaseCheckpointSaver[Any] | None = None
        self._async_savers: dict[asyncio.AbstractEventLoop, asyncio.Task[_LoopSaver]] = {}
        self._fenced: dict[BaseCheckpointSaver[Any], BaseCheckpointSaver[Any]] = {}

    # -- registration ----------------------------------------------------------------

    def register(self, graph: GraphARC, *, gates: Mapping[str, Gate] | None = None,
                 approvers: Mapping[str, Approvers] | None = None, inbox: str | None = None,
                 outcome: Callable[[dict[str, Any]], str] | None = None) -> None:
        """Make ``graph`` drivable here: ``gates`` hold nodes before they run, ``approvers`` say who
        answers each node's interrupts, ``inbox`` receives posted events, ``outcome`` summarises
        a completed thread."""
        self.graphs.add(RegisteredGraph(graph, dict(gates or {}), dict(approvers or {}), inbox, outcome))

    # -- reading ---------------------------------------------------------------------

    @property
    def checkpointer(self) -> BaseCheckpointSaver[Any]:
        """The provider's sync checkpointer (opened on first use)."""
        if self._saver is None:
            self._saver = self.checkpoints.saver()
        return self._saver

    def get(self, thread_id: str) -> Session:
        """Where the thread stands."""
        return self.store.get(thread_id)

    def list(self, status: str | None = None) -> list[Session]:
        """Every session, most recently changed first (or only those in ``status``)."""
        return self.store.list(status)

    def approvals(self, thread_id: str) -> builtins.list[Approval]:
        """Every approval the thread has asked for, oldest first."""
        return self.store.approvals(thread_id)

    def approval(self, approval_id: str) -> Approval:
        """One approval record, whichever thread asked it (``UnknownApprovalError`` if none)."""
        return self.store.approval(approval_id)

    def decided(self, limit: int, *, before: DecisionMark | None = None,
                after: DecisionMark | None = None) -> builtins.list[Approval]:
        """Up to ``limit`` decided approvals of every thread, newest decision first
        (``SessionStore.decided``: ``before`` and ``after`` page on a decision's mark)."""
        return self.store.decided(limit, before=before, after=after)

    def interrupt_value(self, thread_id: str, interrupt_id: str) -> Any:
        """The value the thread's pending ``interrupt()`` ``interrupt_id`` carries (None: none by
        that id), read from its newest checkpoint's writes, so its graph need not be registered."""
        return self.interrupt_values(thread_id).get(interrupt_id)

    def interrupt_values(self, thread_id: str) -> dict[str, Any]:
        """The values of the thread's pending ``interrupt()`` calls by interrupt id (an approval's
        ``hold_key``), read as ``interrupt_value`` reads one."""
        saved = self.checkpointer.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
        return {i.id: i.value for _task, channel, value in (saved.pending_writes or [] if saved else [])
                if channel == INTERRUPT for i in value}

    def scanned_at(self, thread_id: str, step: int, *, values: bool = False) -> Any:
        """The checkpoint of superstep ``step`` as a live turn of the thread in this process last
        scanned it (None: none, or ``values`` wanted and not read), for a reader that would
        otherwise read it again."""
        return self.scanned.at(thread_id, step, values=values)

    def audit(self, thread_id: str, after: int = 0) -> builtins.list[AuditEntry]:
        """The thread's append-only audit trail (``after``: only the entries whose seq is above it)."""
        return self.store.audit(thread_id, after)

    def last_seq(self, thread_id: str, after: int = 0) -> int:
        """Where the thread's audit trail ends (``SessionStore.last_seq``)."""
        return self.store.last_seq(thread_id, after)

    def events(self, thread_id: str) -> builtins.list[Event]:
        """Every event posted to the thread."""
        return self.store.events(thread_id)

    def values(self, thread_id: str) -> dict[str, Any]:
        """The thread's graph state (needs its graph registered here). A stored state that no longer
        fits the graph's state model (a required field missing: LangGraph cannot prepare the next
        node's input, so its snapshot fails) is read as stored, so the thread can still be shown."""
        return self.values_at(thread_id)[0]

    def values_at(self, thread_id: str) -> tuple[dict[str, Any], str | None]:
        """``values``, and when the checkpoint they come from was saved (ISO 8601; None: the thread
        has none, or its stored state no longer fits its graph's model)."""
        session = self.store.get(thread_id)
        compiled = self._compiled(session.graph, thread_id)
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        try:
            snapshot = compiled.get_state(config)
        except ValidationError:
            return stored_values(compiled, config), None
        return dict(snapshot.values), snapshot.created_at

    def history(self, thread_id: str, *, limit: int | None = None, since_step: int | None = None,
                before: str | None = None, metadata: Mapping[str, Any] | None = None) -> builtins.list[Any]:
        """The thread's checkpoints as LangGraph snapshots, newest first (needs its graph
        registered): at most ``limit``, none saved before superstep ``since_step``, only those
        older than checkpoint ``before`` (``UnknownCheckpointError`` if the thread lacks it), only
        those whose metadata has ``metadata``'s key-value pairs; only those are read, however long
        the thread's history."""
        session = self.store.get(thread_id)
        if before is not None:
            self.state_at(thread_id, before)  # an id the thread lacks would page from an arbitrary place
        compiled = self._compiled(session.graph, thread_id)
        return builtins.list(snapshots(compiled, {"configurable": {"thread_id": thread_id}},
                                       Window(since_step=since_step, limit=limit, before=before,
                                              metadata=metadata)))

    def state_at(self, thread_id: str, checkpoint_id: str) -> Any:
        """The thread's state at one of its checkpoints, as a LangGraph snapshot (needs its graph
        registered); ``UnknownCheckpointError`` if the thread has no checkpoint ``checkpoint_id``."""
        session = self.store.get(thread_id)
        if not checkpoint_id:  # LangGraph would read the newest one
            raise UnknownCheckpointError(thread_id, checkpoint_id)
        compiled = self._compiled(session.graph, thread_id)
        snapshot = compiled.get_state({"configurable": {"thread_id": thread_id, "checkpoint_ns": "",
                                                        "checkpoint_id": checkpoint_id}})
        if snapshot.created_at is None:  # LangGraph's empty snapshot: nothing saved under that id
            raise UnknownCheckpointError(thread_id, checkpoint_id)
        return snapshot

    async def wait_for_change(self, thread_id: str, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for another process to write the thread's audit trail:
        True if the store says one did (a ``ChangeNotifier`` store), else False once the time
        has passed, so a store that cannot tell is simply polled every ``timeout``."""
        if self.changes is not None:
            return await self.changes.wait_for_change(thread_id, timeout)
        await asyncio.sleep(timeout)
        return False

    async def wait_for_any_change(self, timeout: float) -> bool:
        """As ``wait_for_change``, for another process's write to any thread's audit trail."""
        if self.changes is not None:
            return await self.changes.wait_for_any_change(timeout)
        await asyncio.sleep(timeout)
        return False

    # -- sync turns ------------------------------------------------------------------

    def create(self, graph: str, *, thread_id: str | None = None, owner: str | None = None,
               tenant: str | None = None, metadata: Mapping[str, Any] | None = None) -> Session:
        """A new session of the registered ``graph``, not yet run; a server records its ``owner`` (the
        user who created it) and their ``tenant``, and the thread's own ``metadata``."""
        self.graphs.get(graph)
        return self.store.create(thread_id or uuid4().hex[:12], graph, self.clock(), owner=owner,
                                 tenant=tenant, metadata=metadata)

    def update_metadata(self, thread_id: str, metadata: Mapping[str, Any], *, by: str) -> Session:
        """Merge ``metadata`` into the thread's own metadata, asked ``by`` whom (on the trail with the
        keys changed); the session after."""
        return self.store.update_metadata(thread_id, metadata, self.clock(), by=by)

    def start(self, graph: str, input: Mapping[str, Any] | None = None, *, thread_id: str | None = None,
              on_update: OnUpdate | None = None) -> Session:
        """Create a session and run its first turn."""
        values = self._input(graph, input)
        session = self.create(graph, thread_id=thread_id)
        return self.run(session.thread_id, values, on_update=on_update)

    def run(self, thread_id: str, input: Mapping[str, Any] | None = None, *,
            on_update: OnUpdate | None = None, budget: Budget | None = None,
            on_record: OnRecord | None = None) -> Session:
        """Run a turn of a created (or completed) session until it pauses or ends; ``budget``
        tightens the graph's (thread-wide) budget for this turn; ``on_record`` is called after
        each write the turn makes to the thread's audit trail."""
        turn = self._start_turn(thread_id, input, Turn, on_update, budget=budget, on_record=on_record)
        turn.drive(turn.start_plan())
        return self.get(thread_id)

    def resume(self, thread_id: str, approval_id: str, decision: str, *, decider: str,
               on_update: OnUpdate | None = None, budget: Budget | None = None,
               on_record: OnRecord | None = None) -> Session:
        """Answer ``approval_id`` (``approved`` or ``rejected``); the last open hold's answer
        resumes the thread in this process (under ``budget`` as in ``run``)."""
        session, graph, compiled = self._for(thread_id)
        lease = self._decide(session, graph, compiled.get_state, approval_id, decision, decider)
        if lease is not None:
            turn = Turn(self.store, self.leases, graph, compiled, lease, self.clock, on_update, budget,
                        on_record, scanned=self.scanned)
            turn.drive(turn.settled())
        return self.get(thread_id)

    def decide(self, thread_id: str, approval_id: str, decision: str, *, decider: str) -> Lease | None:
        """Record the answer to ``approval_id`` without carrying the thread on. When it answers the
        last open hold the thread is claimed for this runner and the lease is returned, to be
        driven with ``acarry_on`` (by a server's worker, so the one deciding is not kept waiting);
        a lease never driven expires and ``recover`` takes the thread over."""
        session, graph, compiled = self._for(thread_id)
        return self._decide(session, graph, compiled.get_state, approval_id, decision, decider)

    def answer(self, thread_id: str, approval_id: str, value: Any, *, answerer: str) -> Lease | None:
        """Answer the plain interrupt ``approval_id`` asks with ``value`` (any JSON value), as
        ``decide`` records a decision: the approval is recorded answered by ``answerer`` and the
        value kept on the trail, where the turn that carries the thread on finds it for the node.
        Refused (``SessionError``) for an approval that asks for a decision."""
        session, graph, compiled = self._for(thread_id)
        approval = self.store.approval(approval_id)
        if approval.kind == GATE or graph.asks_for_decision(
                approval.node, self.interrupt_value(thread_id, approval.hold_key)):
            raise SessionError(f"approval {approval_id} asks for a decision ({', '.join(DECISIONS)}), "
                               "not any answer", hint="decide it instead")
        return self._decide(session, graph, compiled.get_state, approval_id, APPROVED, answerer,
                            Answer(value))

    async def acarry_on(self, lease: Lease, *, on_update: OnUpdate | None = None,
                        budget: Budget | None = None, on_record: OnRecord | None = None,
                        options: TurnOptions = NO_OPTIONS) -> Session:
        """Drive the thread a decision claimed (``decide``'s lease) until it pauses or ends (or stops
        at one of the ``options``' breakpoints, applying their goto and update first)."""
        return await self.aclaim_and_carry_on(lease.thread_id, lambda: lease, on_update=on_update,
                                              budget=budget, on_record=on_record, options=options)

    async def aclaim_and_carry_on(self, thread_id: str, claim: Callable[[], Lease | None], *,
                                  on_update: OnUpdate | None = None, budget: Budget | None = None,
                                  on_record: OnRecord | None = None,
                                  options: TurnOptions = NO_OPTIONS) -> Session:
        """``acarry_on`` the lease ``claim`` takes in a trip to a thread (a resume recording its answers,
        a continue); None from it: the thread still waits, as it stands. A cancel arriving while it
        claims ends the claimed turn as asked (``grapharc.session.claims``)."""
        async def build() -> Built | None:
            saver = await self._async_checkpointer()
            lease = await offload.to_thread(claim)
            if lease is None:
                return None
            session, graph, compiled = await offload.to_thread(self._for, thread_id, saver)
            turn = AsyncTurn(self.store, self.leases, graph, compiled, lease, self.clock, on_update, budget,
                             on_record, self._compiled(session.graph, thread_id), scanned=self.scanned,
                             cancels=self.cancels, options=options)
            return turn, await turn.settled()

        return await self._driven(thread_id, build())

    async def _driven(self, thread_id: str, build: Awaitable[Built | None]) -> Session:
        """Drive the turn ``build`` claims (``claims.claimed``) from its first plan; the thread's session
        (as the turn's last trip read it, else read now: the claim found the thread still waiting)."""
        built = await claimed(build)
        if built is not None:
            return await built[0].drive(built[1])
        return await offload.to_thread(self.get, thread_id)

    def approve(self, thread_id: str, approval_id: str, *, decider: str,
                on_update: OnUpdate | None = None) -> Session:
        """``resume`` with ``approved``."""
        return self.resume(thread_id, approval_id, APPROVED, decider=decider, on_update=on_update)

    def reject(self, thread_id: str, approval_id: str, *, decider: str,
               on_update: OnUpdate | None = None) -> Session:
        """``resume`` with ``rejected``."""
        return self.resume(thread_id, approval_id, DECLINED, decider=decider, on_update=on_update)

    def recover(self, thread_id: str, *, on_update: OnUpdate | None = None,
                budget: Budget | None = None, on_record: OnRecord | None = None) -> Session:
        """Take over a thread whose runner died (once its lease expired) or whose turn failed,
        and carry it on from its last checkpoint (under ``budget`` as in ``run``: a run taken over
        keeps the budget it was given)."""
        _session, graph, compiled = self._for(thread_id)
        lease = self.store.claim_recovery(thread_id, runner=self.runner, ttl=self.lease_seconds,
                                          now=self.clock())
        turn = Turn(self.store, self.leases, graph, compiled, lease, self.clock, on_update, budget, on_record,
                    scanned=self.scanned)
        turn.drive(turn.recovery_plan())
        return self.get(thread_id)

    def update_state(self, thread_id: str, values: Mapping[str, Any], *, as_node: str | None = None,
                     checkpoint_id: str | None = None, by: str) -> dict[str, Any]:
        """A checked write of an idle thread's state from outside a turn, asked by ``by``: as the
        node ``as_node`` (None: the one LangGraph picks), only its declared writes, of the state's
        types, onto the newest checkpoint or ``checkpoint_id`` (a branch from there), under the
        thread's lease (a busy, paused or ended thread is refused) and on its audit trail. The
        new checkpoint's config (``configurable``)."""
        _session, graph, compiled = self._for(thread_id)
        base = self.state_at(thread_id, checkpoint_id) if checkpoint_id else None
        values = _checked_input(values)
        plain = plain_open(graph, self.store.approvals(thread_id), self.interrupt_values(thread_id))
        lease = self.store.claim_edit(thread_id, runner=self.runner, ttl=self.lease_seconds, now=self.clock(),
                                      plain=plain)
        self.leases.held[thread_id] = lease
        detail: dict[str, Any] | None = None
        left: tuple[str | None, dict[str, str] | None] = (None, None)
        try:
            config = edit_config(thread_id, checkpoint_id)
            node = as_node or picked_node(compiled, config)
            write_as = as_node or as_written(node)  # a __start__ named is no node of the graph: refused
            before = compiled.get_state(config) if lease.turn["status"] == PAUSED else None
            written = dict(compiled.update_state(config, values, as_node=write_as)["configurable"])
            if before is not None:
                left = _left_paused(compiled, before if base is None else None, written)
            detail = {"by": by, "as_node": node, "fields": sorted(values),
                      "checkpoint_id": written.get("checkpoint_id"),
                      **({"from_checkpoint": checkpoint_id} if checkpoint_id else {})}
        finally:
            self.leases.held.pop(thread_id, None)
            self.store.finish_edit(lease, self.clock(), detail=detail, status=left[0], carried=left[1],
                                   audited_step=None if base is None else step_of(base))
        return written

    def copy(self, source_id: str, *, by: str, target_id: str | None = None, owner: str | None = None,
             tenant: str | None = None) -> Session:
        """A new thread with the idle thread ``source_id``'s graph, state and checkpoint history,
        owned by ``owner`` (their ``tenant``), asked by ``by``; its trail begins with ``copied``
        (the source's trail is not copied). A copy whose checkpoints fail to copy is removed."""
        graph = self.graphs.get(self.store.get(source_id).graph, source_id)
        target = target_id or uuid4().hex[:12]
        plain = plain_open(graph, self.store.approvals(source_id), self.interrupt_values(source_id))
        self.store.copy(source_id, target, self.clock(), by=by, owner=owner, tenant=tenant, plain=plain)
        try:
            copy_checkpoints(self.checkpointer, source_id, target)
        except BaseException:
            self.delete(target)
            raise
        return self.get(target)

    def post_event(self, thread_id: str, kind: str, payload: Mapping[str, Any] | None = None) -> Event:
        """Queue an event; it reaches the graph's inbox field at the thread's next turn."""
        body = _checked_input(payload)
        return self.store.post_event(thread_id, kind, body, self.clock())

    def prune(self, older_than: float) -> PruneReport:
        """Remove finished sessions unchanged for ``older_than`` seconds, with their checkpoints."""
        if older_than < 0:
            raise SessionError(f"older_than must not be negative, got {older_than}")
        return prune(self.store, self.checkpoints, self.clock() - older_than)

    def prune_threads(self, thread_ids: Sequence[str], strategy: str, *, by: str) -> None:
        """Prune the threads named, all or none, as LangGraph's ``threads.prune`` does: ``"delete"``
        removes each as ``delete`` does; ``"keep_latest"`` keeps each with its latest checkpoints
        only, with a ``pruned`` entry on its trail naming ``by``. Refused before any is pruned if one
        is unknown, being run or waiting on an approval (``retention.refuse_unprunable``)."""
        if strategy not in THREAD_PRUNE_STRATEGIES:
            raise SessionInputError(f"unknown prune strategy {strategy!r}",
                                    hint=f"use one of: {', '.join(THREAD_PRUNE_STRATEGIES)}")
        refuse_unprunable([self.store.get(thread_id) for thread_id in thread_ids], self.clock())
        if strategy == "delete":
            for thread_id in thread_ids:
                self.delete(thread_id)
            return
        for thread_id, dropped in keep_latest(self.checkpointer, thread_ids).items():
            detail = {"by": by, "strategy": strategy, "checkpoints_dropped": dropped}
            self.store.record_pruned(thread_id, detail, self.clock())

    def delete(self, thread_id: str) -> None:
        """Remove one session and its checkpoints, whatever its status, unless a runner holds it now
        (an open approval goes with it)."""
        self.store.delete(thread_id, self.clock())
        delete_threads(self.checkpointer, [thread_id])

    def close(self) -> None:
        """Close the store's and the sync checkpointer's connections (async ones close with ``aclose``)."""
        self.store.close()
        if self._saver is not None:
            self._release(self._saver)
            self._saver = None
        self.checkpoints.close()

    # -- async turns -----------------------------------------------------------------

    async def astart(self, graph: str, input: Mapping[str, Any] | None = None, *,
                     thread_id: str | None = None, on_update: OnUpdate | None = None) -> Session:
        """Async ``start``."""
        values = self._input(graph, input)
        session = await offload.to_thread(self.create, graph, thread_id=thread_id)
        return await self.arun(session.thread_id, values, on_update=on_update)

    async def arun(self, thread_id: str, input: Mapping[str, Any] | None = None, *,
                   on_update: OnUpdate | None = None, budget: Budget | None = None,
                   on_record: OnRecord | None = None, options: TurnOptions = NO_OPTIONS) -> Session:
        """Async ``run``, with a run's ``options`` (``grapharc.session.turn_options``). A cancel of the
        turn's task asked in ``cancels`` first ends the turn where its last checkpoint stands
        (``grapharc.session.cancels``)."""
        async def build() -> Built:
            saver = await self._async_checkpointer()
            turn = await offload.nearby((self,), self._start_turn, thread_id, input, AsyncTurn,
                                        on_update, saver, budget=budget, on_record=on_record, options=options)
            return turn, turn.start_plan()

        return await self._driven(thread_id, build())

    async def acontinue(self, thread_id: str, *, on_update: OnUpdate | None = None,
                        budget: Budget | None = None, on_record: OnRecord | None = None,
                        options: TurnOptions = NO_OPTIONS) -> Session:
        """Carry on a thread a breakpoint stopped (paused on no approval) from where it stopped,
        as ``acarry_on`` carries on a decided one."""
        claim = functools.partial(self.store.claim_continue, thread_id, runner=self.runner,
                                  ttl=self.lease_seconds, now=self.clock())
        return await self.aclaim_and_carry_on(thread_id, claim, on_update=on_update, budget=budget,
                                              on_record=on_record, options=options)

    def check_directive(self, thread_id: str, directive: Directive) -> None:
        """Refuse ``directive`` now, before anything is written, if its goto or update does not fit
        where the thread stands (``grapharc.runtime.directed``'s errors)."""
        _session, graph, compiled = self._for(thread_id)
        snapshot = compiled.get_state({"configurable": {"thread_id": thread_id}})
        directed(graph.builder, compiled, snapshot, goto=directive.goto, update=directive.update)

    async def afork(self, thread_id: str, checkpoint_id: str, input: Mapping[str, Any] | None = None, *,
                    by: str, on_update: OnUpdate | None = None, budget: Budget | None = None,
                    on_record: OnRecord | None = None, options: TurnOptions = NO_OPTIONS) -> Session:
        """Run a turn of the thread from its checkpoint ``checkpoint_id`` (LangGraph's fork: with
        ``input`` it starts over from that state, without it carries on from that checkpoint as it
        stands), asked by ``by``; the trail's ``claimed`` entry says so (``turn: fork``). A paused
        thread's open approvals are superseded; otherwise as ``arun``."""
        async def build() -> Built:
            saver = await self._async_checkpointer()
            turn = await offload.nearby((self,), self._fork_turn, thread_id, checkpoint_id, input,
                                        by, on_update, saver, budget, on_record, options)
            return turn, turn.start_plan()

        return await self._driven(thread_id, build())

    async def aresume(self, thread_id: str, approval_id: str, decision: str, *, decider: str,
                      on_update: OnUpdate | None = None, budget: Budget | None = None,
                      on_record: OnRecord | None = None, options: TurnOptions = NO_OPTIONS) -> Session:
        """Async ``resume`` (``options`` as in ``arun``)."""
        saver = await self._async_checkpointer()
        session, graph, compiled = await offload.to_thread(self._for, thread_id, saver)
        snapshot = await compiled.aget_state({"configurable": {"thread_id": thread_id}})
        claim = functools.partial(self._decide, session, graph, lambda _config: snapshot, approval_id,
                                  decision, decider)
        return await self.aclaim_and_carry_on(thread_id, claim, on_update=on_update, budget=budget,
                                              on_record=on_record, options=options)

    async def arecover(self, thread_id: str, *, on_update: OnUpdate | None = None,
                       budget: Budget | None = None, on_record: OnRecord | None = None,
                       options: TurnOptions = NO_OPTIONS) -> Session:
        """Async ``recover`` (``options`` as in ``arun``: a run taken over keeps its config)."""
        async def build() -> Built:
            saver = await self._async_checkpointer()
            session, graph, compiled = await offload.to_thread(self._for, thread_id, saver)
            lease = await offload.to_thread(self.store.claim_recovery, thread_id, runner=self.runner,
                                            ttl=self.lease_seconds, now=self.clock())
            turn = AsyncTurn(self.store, self.leases, graph, compiled, lease, self.clock, on_update, budget,
                             on_record, self._compiled(session.graph, thread_id), scanned=self.scanned,
                             cancels=self.cancels, options=options)
            return turn, await turn.recovery_plan()

        return await self._driven(thread_id, build())

    async def aclose(self) -> None:
        """Close the async checkpointer of the running event loop, and the sync one."""
        opening = self._async_savers.pop(asyncio.get_running_loop(), None)
        if opening is not None:
            opened = await opening
            self._release(opened.saver)
            await opened.exits.aclose()
        self.close()

    # -- internals -------------------------------------------------------------------

    def _release(self, saver: BaseCheckpointSaver[Any]) -> None:
        """Forget the fenced wrapper and compiled graphs of a checkpointer being closed."""
        fenced = self._fenced.pop(saver, None)
        if fenced is not None:
            self.graphs.forget(fenced)

    async def _async_checkpointer(self) -> BaseCheckpointSaver[Any]:
        """One async checkpointer per event loop, shared by every session that loop drives."""
        loop = asyncio.get_running_loop()
        opening = self._async_savers.get(loop)
        if opening is None:  # stored before the first await, so concurrent turns share it
            opening = self._async_savers[loop] = loop.create_task(self._open_async_checkpointer())
        # shielded: a turn cancelled while the saver opens must not cancel the opening every turn awaits
        return (await asyncio.shield(opening)).saver

    async def _open_async_checkpointer(self) -> _LoopSaver:
        exits = AsyncExitStack()
        saver = await exits.enter_async_context(self.checkpoints.async_saver())
        return _LoopSaver(saver, exits)

    def _compiled(self, name: str, thread_id: str | None, saver: Any = None) -> Any:
        """``name`` compiled over the (fenced) checkpointer: the sync one unless ``saver`` is given."""
        self.graphs.get(name, thread_id)
        inner = saver if saver is not None else self.checkpointer
        fenced = self._fenced.get(inner)
        if fenced is None:
            fenced = self._fenced[inner] = fence(inner, self.leases)
        return self.graphs.compiled(name, fenced)

    def _for(self, thread_id: str, saver: Any = None) -> tuple[Session, RegisteredGraph, Any]:
        """The session, its registration (or ``UnknownGraphError``) and its compiled graph."""
        session = self.store.get(thread_id)
        return session, *self._registered(session.graph, thread_id, saver)

    def _graph_for(self, thread_id: str, saver: Any = None) -> tuple[str, RegisteredGraph, Any]:
        """``_for`` with the thread's graph name in place of its session (a read of one column)."""
        name = graph_of(self.store, thread_id)
        return name, *self._registered(name, thread_id, saver)

    def _registered(self, name: str, thread_id: str, saver: Any) -> tuple[RegisteredGraph, Any]:
        """Graph ``name``'s registration (or ``UnknownGraphError``) and its compiled graph."""
        return self.graphs.get(name, thread_id), self._compiled(name, thread_id, saver)

    def _input(self, graph: str, input: Mapping[str, Any] | None, saver: Any = None) -> dict[str, Any]:
        """Input checked as JSON and against the state of a graph registered here, before
        anything is written."""
        values = _checked_input(input)
        self._compiled(graph, None, saver).contract.check_values("session input", values)
        return values

    def _start_turn(self, thread_id: str, input: Mapping[str, Any] | None, kind: type[Any],
                    on_update: OnUpdate | None, saver: Any = None, *, budget: Budget | None = None,
                    on_record: OnRecord | None = None, options: TurnOptions = NO_OPTIONS) -> Any:
        """Claim a start turn (after checking its input) and build its driver (its scans read
        through the sync checkpointer)."""
        name, graph, compiled = self._graph_for(thread_id, saver)
        values = self._input(name, input, saver)
        lease = self.store.claim_start(thread_id, runner=self.runner, ttl=self.lease_seconds,
                                       now=self.clock(), input=values, inbox=graph.inbox)
        return kind(self.store, self.leases, graph, compiled, lease, self.clock, on_update, budget, on_record,
                    self._compiled(name, thread_id), scanned=self.scanned,
                    audited=self.store.audited_step(thread_id),  # in this trip, not the first scan's own
                    cancels=self.cancels, options=options)

    def _fork_turn(self, thread_id: str, checkpoint_id: str, input: Mapping[str, Any] | None, by: str,
                   on_update: OnUpdate | None, saver: Any, budget: Budget | None,
                   on_record: OnRecord | None, options: TurnOptions) -> AsyncTurn:
        """Claim a fork's turn (its input and checkpoint checked first) and build its driver."""
        name, graph, compiled = self._graph_for(thread_id, saver)
        values = None if input is None else self._input(name, input, saver)
        base = self.state_at(thread_id, checkpoint_id)
        lease = self.store.claim_fork(thread_id, runner=self.runner, ttl=self.lease_seconds, now=self.clock(),
                                      checkpoint_id=checkpoint_id, step=step_of(base), input=values, by=by)
        return AsyncTurn(self.store, self.leases, graph, compiled, lease, self.clock, on_update, budget,
                         on_record, self._compiled(name, thread_id), scanned=self.scanned,
                         audited=self.store.audited_step(thread_id), cancels=self.cancels, options=options)

    def _decide(self, session: Session, graph: RegisteredGraph, get_state: Callable[[Any], Any],
                approval_id: str, decision: str, decider: str, answer: Answer | None = None) -> Lease | None:
        approval = self.store.approval(approval_id)
        snapshot = get_state({"configurable": {"thread_id": session.thread_id}})
        holds = graph.holds(snapshot)
        current = next((h for h in holds if h.key == approval.hold_key), None) or next(
            (h for h in holds if h.node == approval.node and h.kind == approval.kind), None)
        return self.store.decide(session.thread_id, approval_id, decision, decider=decider, now=self.clock(),
                                 current=current, runner=self.runner, ttl=self.lease_seconds, answer=answer)


def _left_paused(compiled: Any, before: Any, written: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """A paused thread's status once its edit wrote ``written``, and the interrupts it was paused on
    at ``before`` carried onto the new checkpoint (old id to new; None for ``before``: the edit
    branched from a past checkpoint, which leaves them behind)."""
    after = compiled.get_state({"configurable": dict(written)})
    carried = {} if before is None else carry_interrupts(compiled.checkpointer, before, after)
    return left_paused(after), carried
