"""A saved checkpoint's tasks as LangGraph's planner names them, without preparing a state snapshot.

LangGraph's ``get_state`` prepares every task of a checkpoint for execution and reads the state's
values; a caller that needs only which tasks the checkpoint has (their ids and names: whether any
node is still due, what each task's saved writes hold) gets them from LangGraph's own planner
(``prepare_next_tasks`` without preparing for execution), at about half the cost. Both the planner
and ``channels_from_checkpoint`` are LangGraph internals (``langgraph.pregel._algo``,
``_checkpoint``); ``tests/grapharc-core/session/test_named_tasks.py`` compares the tasks with a
snapshot's over varied graphs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.channels.base import BaseChannel
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.pregel import Pregel
from langgraph.pregel._algo import prepare_next_tasks
from langgraph.pregel._checkpoint import channels_from_checkpoint


def planned_tasks(pregel: Pregel[Any, Any, Any, Any], saved: CheckpointTuple) -> dict[str, Any]:
    """The tasks of ``saved`` by id, as ``pregel`` (the graph that wrote it) plans them: the same
    ids, names and order as a snapshot's tasks (its ``next`` names every one of them)."""
    return planned(pregel, saved)[0]


def planned(pregel: Pregel[Any, Any, Any, Any],
            saved: CheckpointTuple) -> tuple[dict[str, Any], Mapping[str, BaseChannel[Any, Any, Any]]]:
    """``planned_tasks`` and the channels the planner read them from (the state's values, for a
    caller that renders them too)."""
    step = int(saved.metadata.get("step", -1)) + 1
    saver = pregel.checkpointer if isinstance(pregel.checkpointer, BaseCheckpointSaver) else None
    channels, managed = channels_from_checkpoint(pregel.channels, saved.checkpoint,
                                                 saver=saver, config=saved.config)
    tasks = prepare_next_tasks(saved.checkpoint, saved.pending_writes or [], pregel.nodes, channels,
                               managed, saved.config, step, step + 2, for_execution=False)
    return tasks, channels
