"""The node half of the audit trail, read from the checkpoints rather than from the run.

A node counts as completed once LangGraph has saved its writes; a checkpoint's tasks
then carry a result. Reading completions from the checkpoint history (instead of
noting them as the stream reports them) means a crash between a node's save and its
audit line loses nothing, and a node LangGraph re-runs after a crash is recorded once:
the store keys node entries by (thread, step, node, task). Entries carry the superstep
they ran in; a rescan may append a node after a later one, so read them by step.

LangGraph saves a node's writes in a background thread, and with ``durability="sync"`` it waits
only for the next checkpoint, not for them: a runner killed a step or more later can leave a
node whose effect is in the next checkpoint but whose writes are never saved. A checkpoint that
the run carried on from (its child, saved by the loop) had every task completed, so a scan made
when no run of the thread is live (``settled``) records such a node too, its writes unknown.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from grapharc.session.history import step_of


@dataclass(frozen=True, slots=True)
class NodeRun:
    """A completed node: the superstep it ran in, its name, LangGraph's task id, the fields it wrote
    (None: unknown, its writes were never saved)."""

    step: int
    node: str
    task_id: str
    writes: tuple[str, ...] | None


def _id_of(config: Any) -> str | None:
    """The checkpoint id a snapshot's config (or parent config) names, if any."""
    return ((config or {}).get("configurable") or {}).get("checkpoint_id")


def completed_runs(history: Iterable[Any], since_step: int, *,
                   settled: bool = False) -> tuple[list[NodeRun], int]:
    """Completed node runs in checkpoints at or after ``since_step`` (``history`` newest first),
    oldest step first so the audit trail is written in the order the nodes ran, and where the
    next scan must start.

    LangGraph may save a checkpoint before the writes of the step that led to it, so a
    checkpoint with a task still lacking its result is scanned again next time: the
    returned step is the oldest such checkpoint, else the newest one seen. ``settled``: no run
    of the thread is live, so writes still missing never come; a task lacking its result in a
    checkpoint the loop carried on from is completed, with its writes unknown. Only the thread's
    branch counts: the newest checkpoint and its ancestors (a fork leaves the checkpoints after the
    one it forked from on a branch of their own, which the history lists too).
    """
    runs: list[NodeRun] = []
    newest = since_step
    unfinished: int | None = None
    carried_on: set[str | None] = set()  # checkpoints with a child the loop saved (all tasks done)
    first, branch = True, None  # branch: the checkpoint the thread's branch goes back to next
    for snapshot in history:
        if not first and _id_of(snapshot.config) != branch:
            continue  # a checkpoint of a branch a fork left behind
        first, branch = False, _id_of(snapshot.parent_config)
        step = step_of(snapshot)
        if step < since_step:
            break
        newest = max(newest, step)
        done = settled and _id_of(snapshot.config) in carried_on
        if (snapshot.metadata or {}).get("source") == "loop":
            carried_on.add(_id_of(snapshot.parent_config))
        for task in snapshot.tasks:
            if task.result is None and not done:
                unfinished = step
            elif not task.name.startswith("__"):
                writes = None if task.result is None else (
                    tuple(sorted(task.result)) if isinstance(task.result, dict) else ())
                runs.append(NodeRun(step + 1, task.name, task.id, writes))
    runs.sort(key=lambda run: run.step)  # stable: a step's tasks keep their order
    return runs, newest if unfinished is None else unfinished
