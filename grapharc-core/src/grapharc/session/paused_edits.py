"""What an edit or a copy of a thread paused on plain ``interrupt()`` calls keeps of the pause.

Such a thread may be edited and copied as an idle one is (a thread waiting on a decision may not:
see ``sql_time_travel``). LangGraph's ``update_state`` writes a new checkpoint whose tasks have new
ids, so the interrupts pending on the old one are not on it: the edit carries each one over to the
task of the same node still due (under the id LangGraph gives that task's interrupt, which the
approval's hold key follows), so the thread waits on the same question, answered as before by the
approval's id. An edit written as the interrupted node itself completes that node, as in
LangGraph: its approval is superseded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.types import INTERRUPT
from langgraph.types import Interrupt, StateSnapshot

from grapharc.session.records import COMPLETED, GATE, OPEN, PAUSED, Approval
from grapharc.session.registry import RegisteredGraph


def plain_open(graph: RegisteredGraph, approvals: Iterable[Approval],
               values: Mapping[str, Any]) -> frozenset[str]:
    """The ids of the open ``approvals`` that record plain interrupts (any answer, no decision),
    ``values`` being the pending interrupts' values by interrupt id."""
    return frozenset(a.approval_id for a in approvals if a.state == OPEN and a.kind != GATE
                     and not graph.asks_for_decision(a.node, values.get(a.hold_key)))


def carry_interrupts(saver: BaseCheckpointSaver[Any], before: StateSnapshot,
                     after: StateSnapshot) -> dict[str, str]:
    """Ask the interrupt each of ``before``'s tasks was paused on again on the task of the same node
    still due at ``after`` (the edit's checkpoint), under the id LangGraph gives that task's
    interrupt, so a resume reaches it; old interrupt id to new. A task paused on several at once
    carries none: they are asked afresh when the thread carries on."""
    asked = {task.name: task.interrupts for task in before.tasks if len(task.interrupts) == 1}
    carried: dict[str, str] = {}
    for task in after.tasks:
        if task.name in asked and not task.interrupts and task.result is None:
            [old] = asked[task.name]
            new = Interrupt.from_ns(old.value, f"{task.name}:{task.id}")  # the task's namespace
            saver.put_writes(after.config, [(INTERRUPT, [new])], task.id)
            carried[old.id] = new.id
    return carried


def left_paused(after: StateSnapshot) -> str:
    """The status a paused thread is left in once edited to ``after``: completed when nothing is
    due, else still paused (on the interrupts carried, or stopped before the nodes due)."""
    return PAUSED if after.tasks else COMPLETED
