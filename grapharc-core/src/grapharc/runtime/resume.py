"""Trace continuity across attempts on one thread, derived from the checkpoint alone.

Crash-safe resume is LangGraph's; what this adds is that a resumed run is attempt
``n + 1`` and its trace steps continue just above every step an earlier attempt used, so
replay points stay unique. A trace step is ``shift + superstep``. Every checkpoint a
run writes carries its run id, attempt, shift, ceiling and durability (below) in its
metadata (LangGraph copies scalar ``config["metadata"]`` there), so a trace step maps back
to its checkpoint as ``step - shift``. Each run also pins two small markers as pending
writes on the thread's latest checkpoint: one when it starts (attempt, shift, ceiling,
durability) and one when it ends (with the highest step it used). LangGraph ignores pending
writes whose task id is not one of its tasks, so the markers never affect execution.

A run killed outright writes no end marker. If it ran with ``durability="sync"`` (the
default for checkpointed runs), every superstep it finished is on disk before the next
began, so the most it can have used is the step after the thread's latest checkpoint: the
next attempt continues right above that. Otherwise LangGraph may not have saved its last
checkpoints, and the run is taken to have used steps up to its ceiling, the highest step
it could reach (LangGraph's ``recursion_limit`` bounds it; GraphARC sets it to
``max_iterations + 2`` under an iteration budget): steps never repeat, at the price of a jump.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from grapharc.runtime.thread_spend import NOTHING, SPENT_MARKER, Spent, carried
from grapharc.runtime.wrapped_saver import in_one_trip

MARKER_CHANNEL = "__grapharc_attempt__"
META_ATTEMPT = "grapharc_attempt"
META_SHIFT = "grapharc_shift"
META_RUN = "grapharc_run_id"
META_CEILING = "grapharc_ceiling"
META_SYNC = "grapharc_sync"


@dataclass(frozen=True, slots=True)
class Continuity:
    """Where a new attempt stands: its number, its step shift, the highest step used before
    it (its floor), the highest step it can itself reach (its ceiling), and whether it saves
    every superstep before the next (``durable``)."""

    attempt: int
    shift: int
    floor: int
    ceiling: int
    durable: bool = False
    spent: Spent = NOTHING
    """What the thread had spent before this attempt (read off its latest checkpoint)."""


def thread_config(thread_id: str, checkpoint_id: str | None = None) -> RunnableConfig:
    """The config addressing a thread's root namespace (its latest checkpoint, or one by id)."""
    configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ""}
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def _step(tup: CheckpointTuple) -> int:
    return int(tup.metadata.get("step", -1)) if tup.metadata else -1


def history_of(latest: CheckpointTuple | None) -> tuple[int, int]:
    """(highest attempt, highest trace step possibly used) recorded on the latest checkpoint."""
    if latest is None:
        return 0, 0
    starts: dict[int, dict[str, Any]] = {}
    highs: dict[int, int] = {}
    meta: dict[str, Any] = dict(latest.metadata or {})
    if META_ATTEMPT in meta:
        starts[int(meta[META_ATTEMPT])] = {"shift": int(meta.get(META_SHIFT, 0)),
                                           "ceiling": int(meta[META_CEILING]),
                                           "sync": bool(meta.get(META_SYNC, False))}
    for _task, channel, value in latest.pending_writes or ():
        if channel != MARKER_CHANNEL or not isinstance(value, dict):
            continue
        attempt = int(value["attempt"])
        if "high" in value:
            highs[attempt] = max(highs.get(attempt, 0), int(value["high"]))
        else:
            starts[attempt] = value
    attempts = starts.keys() | highs.keys()
    if not attempts:
        return 0, _step(latest)
    step = _step(latest)

    def used(attempt: int) -> int:
        if attempt in highs:
            return highs[attempt]
        start = starts[attempt]
        if start.get("sync"):  # killed: at most the superstep after the latest saved one ran
            return min(int(start["ceiling"]), int(start.get("shift", 0)) + step + 1)
        return int(start["ceiling"])

    return max(attempts), max(used(attempt) for attempt in attempts)


def plan(latest: CheckpointTuple | None, resumed: CheckpointTuple | None, recursion_limit: int,
         durable: bool = False) -> Continuity:
    """The next attempt on a thread whose latest checkpoint is ``latest``, resuming ``resumed``.

    LangGraph runs supersteps from the resumed step + 1 up to that + ``recursion_limit``
    + 1; one more covers the input checkpoint a new input writes first.
    """
    attempt, high = history_of(latest)
    base = _step(resumed) if resumed is not None else 0  # a new thread's nodes start at 1
    shift = high - base
    return Continuity(attempt + 1, shift, high, shift + base + recursion_limit + 3, durable,
                      carried(latest, MARKER_CHANNEL))


def start_marker(continuity: Continuity) -> dict[str, Any]:
    """The pending-write value a run pins when it starts."""
    return {
        "attempt": continuity.attempt,
        "shift": continuity.shift,
        "ceiling": continuity.ceiling,
        "sync": continuity.durable,
    }


def end_marker(attempt: int, shift: int, high: int, spent: Spent | None = None) -> dict[str, Any]:
    """The pending-write value a run pins when it ends: the highest step it used and, for a
    thread-metered run, the thread's spend."""
    marker: dict[str, Any] = {"attempt": attempt, "shift": shift, "high": high}
    if spent is not None:
        marker[SPENT_MARKER] = spent.written()
    return marker


def _marker_config(tup: CheckpointTuple) -> RunnableConfig:
    conf = tup.config["configurable"]
    return thread_config(conf["thread_id"], conf["checkpoint_id"])


class ThreadLedger:
    """Reads and pins the continuity records of one thread through its checkpointer."""

    def __init__(self, saver: BaseCheckpointSaver[Any], config: RunnableConfig, thread_id: str) -> None:
        self.saver = saver
        self.thread_id = thread_id
        self.resume_id: str | None = config.get("configurable", {}).get("checkpoint_id")

    def open(self, run_id: str, recursion_limit: int, durable: bool = False) -> Continuity:
        """Plan this attempt and pin its start marker on the thread's latest checkpoint."""
        latest = self.saver.get_tuple(thread_config(self.thread_id))
        resumed = latest
        if self.resume_id is not None and latest is not None:
            resumed = self.saver.get_tuple(thread_config(self.thread_id, self.resume_id))
        continuity = plan(latest, resumed, recursion_limit, durable)
        if latest is not None:
            self.saver.put_writes(
                _marker_config(latest),
                [(MARKER_CHANNEL, start_marker(continuity))],
                f"grapharc:{run_id}:start",
            )
        return continuity

    def close(self, run_id: str, value: dict[str, int]) -> CheckpointTuple | None:
        """Pin the end marker on whatever checkpoint is latest now; returns that checkpoint as read
        before (its pending writes without the marker, which names no task)."""
        latest = self.saver.get_tuple(thread_config(self.thread_id))
        if latest is None:
            return None
        self.saver.put_writes(_marker_config(latest), [(MARKER_CHANNEL, value)], f"grapharc:{run_id}:end")
        return latest

    async def aopen(self, run_id: str, recursion_limit: int, durable: bool = False) -> Continuity:
        """Async twin of ``open`` for async checkpointers (``open`` itself, in one trip, where the
        saver runs its calls on a thread of its own: ``in_one_trip``)."""
        if (trip := in_one_trip(self.saver)) is not None:
            continuity: Continuity = await trip(self.open, run_id, recursion_limit, durable)
            return continuity
        latest = await self.saver.aget_tuple(thread_config(self.thread_id))
        resumed = latest
        if self.resume_id is not None and latest is not None:
            resumed = await self.saver.aget_tuple(thread_config(self.thread_id, self.resume_id))
        continuity = plan(latest, resumed, recursion_limit, durable)
        if latest is not None:
            await self.saver.aput_writes(
                _marker_config(latest),
                [(MARKER_CHANNEL, start_marker(continuity))],
                f"grapharc:{run_id}:start",
            )
        return continuity

    async def aclose(self, run_id: str, value: dict[str, int]) -> RunnableConfig | None:
        """Async twin of ``close``."""
        latest = await self.saver.aget_tuple(thread_config(self.thread_id))
        if latest is None:
            return None
        await self.saver.aput_writes(
            _marker_config(latest), [(MARKER_CHANNEL, value)], f"grapharc:{run_id}:end"
        )
        return latest.config
