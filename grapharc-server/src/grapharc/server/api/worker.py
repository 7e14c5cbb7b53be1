"""Each ``grapharc serve`` process's worker loop: it claims runs from the durable queue and drives them.

At once when a request here queued a run or asked for a cancel, or a run here ended (which may let
a run queued behind it on its thread start), and otherwise every ``POLL_SECONDS`` (sooner when the
claims of the runs executing here are due for renewal), the loop, as one worker of the shared run
store:

- renews its claims on the runs it executes (``RENEWALS_PER_TTL`` times per claim's TTL: a tick
  in between, with nothing to cancel, reclaim or claim, only reads that there is none, with
  ``RunStore.has_work``, on the event loop where the run store's reads may run there) and cancels
  those whose cancel was requested (from any worker): the turn ends where its last checkpoint
  leaves the thread, idle or paused, as the cancel's action says (``grapharc.session.cancels``: a
  rollback also discards what the run wrote and reopens the approvals it answered, and its record
  is deleted);
- reclaims runs of graphs registered here whose worker died (their claim ran out; the session
  layer refuses the takeover while the thread's lease is still live) and carries each on with
  ``SessionManager.arecover`` from the thread's last checkpoint, under the run's own budget;
- claims every runnable run of a graph registered here (the first pending run of a thread with
  none running) and drives its turn with ``arun`` or ``aresume``, recording where its part of
  the trace begins and ends and how it ended.

A run's turn, first driven or reclaimed, runs with the config its request keeps
(``grapharc.server.api.run_config``).

A decision taken on an inbox page is recorded while the person waits; the thread is carried on
by a run ``hand_over`` adds already claimed by this worker (with the config of the thread's last
run, the one that paused it) and drives at once under the decision's lease. A resume run records
its answers the same way (``interrupts.record``) as its turn begins, then carries the thread on as
that run does. If this process dies meanwhile, another
worker reclaims the run once its claim runs out and recovers the thread once the lease has, as for
any run whose worker died.

A run that streams a mode only its live log serves (``grapharc.server.api.live``) has its turn
given a ``LiveLog``, closed (its last events written) before the run's end is recorded.

What only the poll finds, and so waits for it, at most ``POLL_SECONDS``: a run queued through
another process (another ``--workers`` process, a cron of another server) that no process has
claimed, a cancel asked through another process of a run executing here, and the runs of a dead
worker once their claims have run out.

When the server stops, the runs executing here are cancelled without being ended: their claims
run out and another worker (or this one, restarted) carries them on.

A run whose request says ``on_completion: delete`` (a stateless run) has its thread deleted
``stateless_grace`` seconds after it ends, so the clients waiting on or streaming it read its
end first; a thread paused on an open approval, or with another run pending or running by then,
is kept. The wait is this process's: a server stopped during it leaves the thread (``grapharc
session prune`` removes finished threads).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import math
import uuid
from collections.abc import Callable

from grapharc.errors import GraphARCError
from grapharc.runs.contracts import RunStore
from grapharc.runs.records import (
    DELETE,
    ENQUEUE,
    ERROR,
    INTERRUPTED,
    ON_COMPLETION,
    ROLLBACK,
    SUCCESS,
    RunRecord,
)
from grapharc.runtime.budget import Budget
from grapharc.server.api import commands, interrupts, run_facts
from grapharc.server.api.live import LiveLog, streams_live
from grapharc.server.api.progress import RUN_BEGAN, Progress
from grapharc.server.api.run_config import REQUEST_KEY
from grapharc.session.breakpoints import Breakpoints
from grapharc.session.cancels import Cancel
from grapharc.session.errors import UnknownSessionError
from grapharc.session.lease import Lease
from grapharc.session.manager import SessionManager
from grapharc.session.records import COMPLETED, FAILED, FORK, PAUSED, REJECTED, RUNNING, AuditKind, Session
from grapharc.session.turn_options import TurnOptions
from grapharc.stores import offload

POLL_SECONDS = 2.0
"""How often the loop looks at the run store unwoken: the bound on what only the poll finds (see
the module). Each look is a read (0.5 s made four a second, most of an idle server's CPU)."""
RENEWALS_PER_TTL = 6
"""How many times per claim's TTL the worker renews its claims (a write): with the default 30 s, every
5 s rather than every tick, leaving five sixths of the TTL for a slow tick."""
STATELESS_GRACE_SECONDS = 30.0
TURN_BEGAN = frozenset({AuditKind.CLAIMED, AuditKind.DECIDED, AuditKind.RECLAIMED})
"""Audit entries a run's turn writes as it takes the thread: one after ``after_seq`` means it began."""
CARRY_ON = "carry_on"
"""The kind of a run that carries on a thread a decision already claimed (``RunWorker.hand_over``)."""
CONTINUE = "continue"
"""The kind of a run that carries on a thread a breakpoint stopped (``SessionManager.acontinue``)."""

_RUN_STATUS = {PAUSED: INTERRUPTED, COMPLETED: SUCCESS, REJECTED: SUCCESS, FAILED: ERROR}
_log = logging.getLogger("grapharc.server")


class RunWorker:
    """The loop of one server process over ``runs``, driving turns through ``manager``."""

    def __init__(self, manager: SessionManager, runs: RunStore, progress: Progress, *,
                 stateless_grace: float = STATELESS_GRACE_SECONDS,
                 on_end: Callable[[RunRecord], None] | None = None) -> None:
        self.manager = manager
        self.on_end = on_end
        """Told of each run here once it has ended and its end is recorded (the webhook sender)."""
        self.runs = runs
        self.progress = progress
        self.stateless_grace = stateless_grace
        self._forgetting: set[asyncio.Task[None]] = set()
        self.name = manager.runner
        self.ttl = manager.lease_seconds
        self._executing: dict[str, tuple[RunRecord, asyncio.Task[None]]] = {}
        self._cancels: dict[str, Cancel] = {}  # by run id: the cancels asked of runs executing here
        self._handed: dict[str, Lease] = {}
        self._wake = asyncio.Event()
        self._runnable = False
        """A run runnable now was queued since the last look (``wake(runnable=True)``)."""
        self._renewed_at = -math.inf
        self._reads_on_loop = offload.reads_on_loop(runs)
        self._stores = (runs, manager)
        """What the worker's own calls read and change (``offload.nearby``: in place where they allow it)."""
        self._loop: asyncio.Task[None] | None = None
        self._stopping = False

    def start(self) -> None:
        """Start the loop on the running event loop."""
        self._loop = asyncio.get_running_loop().create_task(self._run(), name=f"runs:{self.name}")

    async def stop(self) -> None:
        """Stop the loop and cancel the runs executing here, leaving them to be reclaimed."""
        self._stopping = True
        tasks = [t for t in (self._loop, *(task for _run, task in self._executing.values())) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def hand_over(self, lease: Lease, graph: str, after_seq: int, budget: Budget | None) -> RunRecord:
        """Carry on the thread a decision here claimed with ``lease``, as a run of this worker's
        (its part of the trail begins after ``after_seq``, read before the decision)."""
        now = self.manager.clock()
        run = RunRecord(run_id=str(uuid.uuid4()), thread_id=lease.thread_id, assistant_id=graph,
                        request={"kind": CARRY_ON}, created_at=now, updated_at=now, after_seq=after_seq,
                        budget=budget, multitask_strategy=ENQUEUE)
        added = await offload.nearby(self._stores, self._add_carrying, run, now)
        self._handed[added.run_id] = lease
        self._launch(added, reclaimed=False)
        return added

    def _add_carrying(self, run: RunRecord, now: float) -> RunRecord:
        """Add ``run`` claimed by this worker, with the config of the thread's last run (the one that
        paused it): a decision on a page carries the thread on as that run was configured, as an API
        resume does with the config it sends."""
        last = self.runs.of_thread(run.thread_id, limit=1)
        config = last[0].request.get(REQUEST_KEY) if last else None
        if config is not None:
            run = dataclasses.replace(run, request={**run.request, REQUEST_KEY: config})
        return self.runs.add_claimed(run, self.name, now, self.ttl)

    def wake(self, *, runnable: bool = False) -> None:
        """Make the loop look at the queue now (a run was queued or a cancel asked here);
        ``runnable``: the caller has just queued a run that can be claimed at once, so the look
        claims without first reading whether there is work (``RunStore.has_work``)."""
        self._runnable = self._runnable or runnable
        self._wake.set()

    async def _run(self) -> None:
        """Tick until stopped. The wait between ticks is ``asyncio.timeout``, not ``wait_for``:
        Python 3.11's ``wait_for`` swallows a cancel that arrives as its awaitable completes (a
        ``wake`` as the server stops), and the loop then ran on with ``stop`` waiting for it."""
        while not self._stopping:
            try:
                await self._tick()
            except GraphARCError as exc:  # a store that cannot be reached: say so, try again next tick
                _log.warning("run worker %s: %s", self.name, exc)
            except Exception:  # the loop outlives any one tick's surprise; the log has the details
                _log.exception("run worker %s: unexpected failure; trying again", self.name)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._until_next_look()):
                    await self._wake.wait()
            self._wake.clear()

    def _until_next_look(self) -> float:
        """Seconds to wait unwoken: ``POLL_SECONDS``, or less when the claims of the runs executing
        here come due for renewal first."""
        if not self._executing:
            return POLL_SECONDS
        due = self._renewed_at + self.ttl / RENEWALS_PER_TTL - self.manager.clock()
        return max(0.0, min(POLL_SECONDS, due))

    async def _tick(self) -> None:
        """One look at the run store: when it has work for this worker (a cancel, a run to reclaim or
        claim) or the claims are due for renewal, one trip to a thread that does it all; else only
        the read that says there is none."""
        executing = bool(self._executing)
        renewing = executing and self.manager.clock() >= self._renewed_at + self.ttl / RENEWALS_PER_TTL
        runnable, self._runnable = self._runnable, False
        if not renewing and not runnable and not await self._has_work():
            return
        cancelled, reclaimed, claimed = await offload.nearby(self._stores, self._due, executing)
        asked = [self._executing[run_id][0] for run_id in cancelled
                 if run_id in self._executing and run_id not in self._cancels]
        if asked:
            for run in await offload.to_thread(self._as_they_stand, asked):
                self._cancel(run)
        for run in reclaimed:
            self._launch(run, reclaimed=True)
        for run in claimed:
            if run.after_seq is not None:  # begun in the claim's trip: wake its readers, as _execute does
                self.progress.notify(run.thread_id, RUN_BEGAN)
            self._launch(run, reclaimed=False)

    async def _has_work(self) -> bool:
        """``RunStore.has_work`` for this worker now: on the loop where the run store's reads may run
        there, else in a trip to a thread."""
        graphs = self.manager.graphs.names()
        look = functools.partial(self.runs.has_work, self.name, self.manager.clock(), graphs)
        return look() if self._reads_on_loop else await offload.to_thread(look)

    def _due(self, executing: bool) -> tuple[list[str], list[RunRecord], list[RunRecord]]:
        """Renew this worker's claims (when it ``executing`` any), then take the stale runs of the
        graphs registered here and every runnable one, recording where each run claimed begins (a
        trip fewer per run than in its own): the ids of the runs here whose cancel was asked, the
        runs reclaimed and the runs claimed."""
        now, graphs = self.manager.clock(), self.manager.graphs.names()
        cancelled = self.runs.heartbeat(self.name, now, self.ttl) if executing else []
        reclaimed = [taken for stale in self.runs.stale(now) if stale.assistant_id in graphs
                     if (taken := self.runs.reclaim(stale.run_id, self.name, now, self.ttl)) is not None]
        claimed: list[RunRecord] = []
        while (run := self.runs.claim_next(self.name, now, self.ttl, graphs)) is not None:
            claimed.append(self._begun(run))
        if executing or reclaimed or claimed:  # every claim held here was renewed or taken just now
            self._renewed_at = now
        return cancelled, reclaimed, claimed

    def _begun(self, run: RunRecord) -> RunRecord:
        """``run``, just claimed, with its beginning recorded (``_begin``) in the claim's trip; as
        claimed when that failed (its execution tries again, and records how it failed)."""
        try:
            return dataclasses.replace(run, after_seq=self._begin(run))
        except Exception:  # the run's own execution meets it again, and records it
            return run

    def _as_they_stand(self, runs: list[RunRecord]) -> list[RunRecord]:
        """The runs' records as they are now (their requests say the cancels asked of them)."""
        return [self.runs.get(run.thread_id, run.run_id) for run in runs]

    def _cancel(self, run: RunRecord) -> None:
        """Cancel the task of ``run`` (if it still executes here), once, telling its turn who asked and
        the action first (``SessionManager.cancels``), so it ends idle rather than failed."""
        executing = self._executing.get(run.run_id)
        if executing is None or run.run_id in self._cancels:
            return
        asked = run.cancel
        cancel = Cancel(by=str(asked.get("by", "api")), run_id=run.run_id,
                        rollback=asked.get("action") == ROLLBACK, since=run.after_seq)
        self._cancels[run.run_id] = cancel
        self.manager.cancels.ask(run.thread_id, cancel)
        executing[1].cancel()

    def _launch(self, run: RunRecord, *, reclaimed: bool) -> None:
        self._executing[run.run_id] = (run, asyncio.get_running_loop().create_task(
            self._execute(run, reclaimed), name=f"run:{run.run_id}"))

    async def _execute(self, run: RunRecord, reclaimed: bool) -> None:
        """Drive ``run`` to its end and record how it ended (unless the server is stopping)."""
        status, error = SUCCESS, None
        begun = run.after_seq or 0
        live: LiveLog | None = None
        try:
            if run.after_seq is None:
                begun = await offload.nearby(self._stores, self._begin, run)
                self.progress.notify(run.thread_id, RUN_BEGAN)  # its readers poll slowly from now on
            if streams_live(run):
                live = await LiveLog.open(self.runs, run, self.progress, self.manager.clock)
            session = await (self._carry_on(run, live) if reclaimed else self._turn(run, live))
            status = _RUN_STATUS.get(session.status, SUCCESS)
        except asyncio.CancelledError:
            if self._stopping:
                raise
            status, error = INTERRUPTED, "cancelled"
        except Exception as exc:  # a node's failure (the thread is recorded failed) or GraphARC's
            # refusal: "<type>: <message>", as the thread's trail says it (the stream's error event splits it)
            status, error = ERROR, f"{type(exc).__name__}: {exc}"
        finally:
            if not self._stopping:
                self._executing.pop(run.run_id, None)
        if live is not None:
            await live.close()  # every live event is in the log before the run is seen ended
        cancel = self._cancels.pop(run.run_id, None)
        self.manager.cancels.take(run.thread_id)  # one its turn never took (it had not begun) goes too
        await offload.nearby(self._stores, self._end, run, begun, status, error,
                             cancel is not None and cancel.rollback)
        self.progress.notify(run.thread_id)
        self.wake()  # a run queued behind this one on its thread can be claimed now
        if self.on_end is not None:
            self.on_end(run)
        if run.request.get(ON_COMPLETION) == DELETE:
            asyncio.get_running_loop().call_later(self.stateless_grace, self._forget, run.thread_id)

    def _forget(self, thread_id: str) -> None:
        """Delete a stateless run's thread (in a task, kept until it is done)."""
        task = asyncio.get_running_loop().create_task(offload.to_thread(self._delete_finished, thread_id),
                                                      name=f"forget:{thread_id}")
        self._forgetting.add(task)
        task.add_done_callback(self._forgetting.discard)

    def _delete_finished(self, thread_id: str) -> None:
        """Delete the thread unless it waits on a person or has a run pending or running."""
        try:
            if self.manager.get(thread_id).status == PAUSED or not all(
                    run.ended for run in self.runs.of_thread(thread_id)):
                return
            self.manager.delete(thread_id)
            self.runs.forget_live(thread_id)
        except UnknownSessionError:
            return  # its client deleted it first
        except GraphARCError as exc:  # busy again, or a store that cannot be reached: the thread stays
            _log.warning("run worker %s: the stateless thread %s is kept: %s", self.name, thread_id, exc)

    async def _turn(self, run: RunRecord, live: LiveLog | None) -> Session:
        """The session-layer call the run's request makes: a start with input, a fork from a past
        checkpoint, or a carry-on of the thread a decision claimed (a resume records its decision
        first, as the inbox's does); the thread's session as the turn left it. ``live``: the run's
        live log, given the turn's chunks."""
        request, on_record = run.request, self.progress.watcher(run.thread_id)
        options = _options(run, live)
        if request["kind"] == "start":
            return await self.manager.arun(run.thread_id, request["input"], on_record=on_record,
                                           budget=run.budget, options=options)
        if request["kind"] == CONTINUE:
            return await self.manager.acontinue(run.thread_id, on_record=on_record, budget=run.budget,
                                                options=options)
        if request["kind"] == FORK:
            return await self.manager.afork(run.thread_id, request["checkpoint_id"], request["input"],
                                            by=request["by"], on_record=on_record, budget=run.budget,
                                            options=options)
        claim: Callable[[], Lease | None]
        if request["kind"] == CARRY_ON:
            claim = functools.partial(self._handed.pop, run.run_id)  # the lease a decision here took
        else:  # None: the answers left one of several open holds open, and the thread still waits
            claim = functools.partial(interrupts.record, self.manager, run.thread_id, request["answers"])
        return await self.manager.aclaim_and_carry_on(run.thread_id, claim, on_record=on_record,
                                                      budget=run.budget, options=options)

    async def _carry_on(self, run: RunRecord, live: LiveLog | None) -> Session:
        """A reclaimed run: run its turn if that never began; else, once the thread's lease has
        expired, recover a thread the dead worker left running (or failed, as a stopping server's
        cancelled turn does); a thread that ended otherwise leaves only the run's end to record.
        The thread's session as it was left."""
        while True:
            session = await offload.to_thread(self.manager.get, run.thread_id)
            if session.lease_live(self.manager.clock()):
                await asyncio.sleep(self.ttl / 3)
                continue
            if not await offload.to_thread(self._turn_began, run):
                return await self._turn(run, live)
            if session.status in (RUNNING, FAILED):
                watcher = self.progress.watcher(run.thread_id)
                recovery = await offload.to_thread(self._recovery_options, run, live)
                return await self.manager.arecover(run.thread_id, on_record=watcher, budget=run.budget,
                                                   options=recovery)
            return session

    def _begin(self, run: RunRecord) -> int:
        """Record that the run's part of the trace begins after the thread's last entry now; its seq."""
        begun = self.manager.last_seq(run.thread_id)
        self.runs.begin(run.run_id, self.name, begun)
        return begun

    def _end(self, run: RunRecord, begun: int, status: str, error: str | None, rolled_back: bool) -> None:
        """Record how the run ended and the seq its part of the trace ends at (after ``begun``); a
        run rolled back is deleted instead, as LangGraph deletes it (the trail keeps the cancel)."""
        if rolled_back:
            self.runs.delete(run.thread_id, run.run_id, rolled_back=True)
            return
        self.runs.finish(run.run_id, self.name, status, self.manager.clock(),
                         end_seq=self.manager.last_seq(run.thread_id, begun), error=error)

    def _recovery_options(self, run: RunRecord, live: LiveLog | None) -> TurnOptions:
        """What a reclaimed run asks of the turn that recovers its thread: all its request asks (its
        breakpoints stop it still), but a goto and update the dead worker's turn already applied
        (a ``directed`` entry in the run's part of the trail) are not applied twice."""
        options = _options(run, live)
        if options.directive is not None and any(
                e.kind == AuditKind.DIRECTED for e in self.manager.audit(run.thread_id, run.after_seq or 0)):
            return dataclasses.replace(options, directive=None)
        return options

    def _turn_began(self, run: RunRecord) -> bool:
        """Whether the run's turn took its thread (a run that never recorded its start never did)."""
        begun = run.after_seq
        return begun is not None and any(e.kind in TURN_BEGAN
                                         for e in self.manager.audit(run.thread_id, begun))



def _options(run: RunRecord, live: LiveLog | None) -> TurnOptions:
    """What ``run`` asks of the turn that carries it: its live log, its id on the checkpoints, the
    breakpoints and the goto/update its request carries, and its caller's config with the run's own
    metadata keys (``run_facts.turn_caller``), and whether its stream renders ``values`` from the scans."""
    named = run.request.get("breakpoints")
    stops = None if named is None else Breakpoints(tuple(named["before"]), tuple(named["after"]))
    return TurnOptions(live=live, run_id=run.run_id, breakpoints=stops,
                       directive=commands.of_request(run.request),
                       caller=run_facts.turn_caller(run), values_read="values" in run.stream_modes)
