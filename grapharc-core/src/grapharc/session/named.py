"""A checkpoint's tasks named from its saved tuple, without LangGraph preparing a state snapshot.

The audit scan after each node needs only which tasks a checkpoint has (name, id) and the result
each one's saved writes hold. A ``StateSnapshot`` also prepares every task for execution, reads the
state's values, applies null writes and looks up subgraph states: naming the tasks alone costs
about half as much (a chain turn's scans and recording together about a third less CPU).
The names cannot be read from the tuple alone (a pending write carries its task's id, not its name;
a ``Send`` task's path holds only its index in the packet list), so LangGraph's own planner names
them (``grapharc.runtime.planned``) and its own ``tasks_w_writes`` puts the results on them: the
same ids, names, order and results as a snapshot's tasks, by construction. Both are LangGraph
internals (``langgraph.pregel._algo``, ``langgraph.pregel.debug``); the property test in
``tests/grapharc-core/session/test_named_tasks.py`` compares the two over varied graphs.

A reader that renders the state after each node (a stream in the ``values`` mode) asks for the
values too: the channels the planner read, after the checkpoint's null writes (an update no task
made), as LangGraph's snapshot reads them (``read_channels``, ``apply_writes``: internals too,
compared by the same test), still without preparing the tasks for execution.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langgraph._internal._constants import INPUT, NULL_TASK_ID
from langgraph.channels.base import BaseChannel
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.pregel import Pregel
from langgraph.pregel._algo import PregelTaskWrites, apply_writes
from langgraph.pregel._io import read_channels
from langgraph.pregel.debug import tasks_w_writes

from grapharc.runtime.planned import planned


@dataclass(frozen=True, slots=True)
class Named:
    """A saved checkpoint as a node scan sees it: where it stands on the thread (its configs and
    metadata) and its tasks with the results their saved writes hold, its values left unread (None)
    unless asked for. The tasks are empty for a checkpoint left unnamed (none of its tasks has a
    result to record)."""

    config: Any
    parent_config: Any
    metadata: Any
    tasks: tuple[Any, ...] = ()
    values: dict[str, Any] | None = None


def unnamed(saved: CheckpointTuple) -> Named:
    """``saved`` with its tasks left out (for the newest checkpoint with no write saved yet: its
    tasks would only repeat its step as the scan's watermark)."""
    return Named(saved.config, saved.parent_config, saved.metadata)


def named(pregel: Pregel[Any, Any, Any, Any], saved: CheckpointTuple, *, values: bool = False) -> Named:
    """``saved`` with its tasks named as ``pregel`` (the graph that wrote it) plans them, each with
    the result its saved writes hold (None until its writes are saved); ``values``: the state's
    values read too, as its snapshot's."""
    tasks, channels = planned(pregel, saved)
    results = tasks_w_writes(tasks.values(), saved.pending_writes, None, pregel.stream_channels_asis)
    read = _values(pregel, saved, channels) if values else None
    return Named(saved.config, saved.parent_config, saved.metadata, results, read)


def _values(pregel: Pregel[Any, Any, Any, Any], saved: CheckpointTuple,
            channels: Mapping[str, BaseChannel[Any, Any, Any]]) -> dict[str, Any]:
    """The state's values in ``channels`` (planned from ``saved``) once its null writes are applied,
    as ``Pregel._prepare_state_snapshot`` reads them."""
    if null_writes := [w[1:] for w in saved.pending_writes or [] if w[0] == NULL_TASK_ID]:
        apply_writes(saved.checkpoint, channels, [PregelTaskWrites((), INPUT, null_writes, [])], None,
                     pregel.trigger_to_nodes)
    read: dict[str, Any] = read_channels(channels, pregel.stream_channels_asis)
    return read
