"""What a state edit and a copy need of LangGraph's checkpoints: the node an edit is written as, and
a thread's checkpoints copied onto another thread id.

An edit is checked against the declared writes of the node it is written as; when the caller names
none, that is the node LangGraph picks (the one that wrote the state last), so the check and
LangGraph's write agree on the node. A copy writes the source's checkpoints and their pending
writes oldest first through the saver's ordinary ``put`` and ``put_writes``, so it works on every
checkpointer, with or without a ``copy_thread`` of its own.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.constants import START

from grapharc.runtime.compiled import CompiledGraphARC
from grapharc.session.errors import SessionInputError


def edit_config(thread_id: str, checkpoint_id: str | None) -> RunnableConfig:
    """The config an edit writes through: the thread's newest checkpoint, or ``checkpoint_id``."""
    at = {"checkpoint_id": checkpoint_id} if checkpoint_id else {}
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", **at}}


def picked_node(compiled: CompiledGraphARC, config: RunnableConfig) -> str:
    """The node LangGraph writes an edit without ``as_node`` as: the node that wrote the state last
    (``__start__`` on a thread with no node run yet, where the edit is checked as run input);
    ``SessionInputError`` when two nodes wrote last together and only the caller can say which."""
    saver = compiled.checkpointer
    saved = saver.get_tuple(config) if saver is not None else None
    seen = saved.checkpoint["versions_seen"] if saved is not None else {}
    # LangGraph's own choice, so the node checked here is the node LangGraph writes as
    node: str | None = compiled.inner._infer_as_node(seen)
    if node is None:
        raise SessionInputError("this edit could be written as more than one node (they wrote the state "
                                "last together)", hint=f"name as_node: one of {', '.join(compiled.nodes)}")
    return node


def as_written(node: str) -> str | None:
    """``node`` as ``CompiledGraphARC.update_state`` takes it: input (``__start__``) is None."""
    return None if node == START else node


def copy_checkpoints(saver: BaseCheckpointSaver[Any], source_id: str, target_id: str) -> None:
    """Write every checkpoint of ``source_id`` (each with its parent and pending writes) onto
    ``target_id``, oldest first."""
    for saved in reversed(list(saver.list({"configurable": {"thread_id": source_id}}))):
        parent = ((saved.parent_config or {}).get("configurable") or {}).get("checkpoint_id")
        namespace = saved.config["configurable"].get("checkpoint_ns", "")
        config: RunnableConfig = {"configurable": {"thread_id": target_id, "checkpoint_ns": namespace,
                                                   **({"checkpoint_id": parent} if parent else {})}}
        written = saver.put(config, saved.checkpoint, saved.metadata, saved.checkpoint["channel_versions"])
        by_task: dict[str, list[tuple[str, Any]]] = defaultdict(list)
        for task_id, channel, value in saved.pending_writes or ():
            by_task[task_id].append((channel, value))
        for task_id, writes in by_task.items():
            saver.put_writes(written, writes, task_id)
