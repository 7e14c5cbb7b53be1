"""What rolling a run back undoes beyond its own checkpoints: its writes on the checkpoint it
started from, and the answers it recorded.

LangGraph marks each checkpoint with the ``run_id`` of the run that wrote it, so ``delete_for_runs``
takes a run's checkpoints away. A run that resumed a paused thread (or carried on one a breakpoint
or a cancel stopped) also saved writes on the checkpoint it started from, which is not its own:
the answers (LangGraph's resume, a write of no task) and what the resumed tasks returned. Left
there, they would show those tasks done although the run is gone. So a turn remembers the
checkpoint it found; a rollback that returns the thread to it discards the writes of every task
that had not finished there, but the interrupts they asked (``discard_writes``, which GraphARC's
savers offer), and reopens the approvals the run answered whose question is asked again: the
thread waits on the same question, unanswered. The audit trail keeps the answer and the cancel.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any, cast

from langgraph._internal._constants import NULL_TASK_ID
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import StateSnapshot

from grapharc.runtime.wrapped_saver import DiscardsWrites, offers
from grapharc.session.approvals import Hold
from grapharc.session.records import DECISIONS, Approval


def _checkpoint_id(snapshot: StateSnapshot) -> str | None:
    return snapshot.config["configurable"].get("checkpoint_id")


def discard_run_writes(saver: BaseCheckpointSaver[Any], found: StateSnapshot | None,
                       head: StateSnapshot) -> bool:
    """Discard on ``head`` (the thread's checkpoint once the run's own are deleted) the step's input
    and the writes of each task that had not finished at ``found`` (where the run's turn started),
    if ``head`` is that checkpoint and ``saver`` can; whether it did."""
    if found is None or _checkpoint_id(found) != _checkpoint_id(head) or not offers(saver, "discard_writes"):
        return False
    unfinished = [task.id for task in found.tasks if task.result is None]
    cast(DiscardsWrites, saver).discard_writes(head.config, [*unfinished, NULL_TASK_ID])
    return True


def reopened(approvals: Iterable[Approval], holds: Iterable[Hold], answered: Collection[str]) -> list[str]:
    """The ids of the ``answered`` approvals (those the rolled-back run decided) whose hold the thread
    is held on again, unchanged."""
    held = {hold.key: hold.digest for hold in holds}
    return [a.approval_id for a in approvals
            if a.approval_id in answered and a.state in DECISIONS and held.get(a.hold_key) == a.digest]
