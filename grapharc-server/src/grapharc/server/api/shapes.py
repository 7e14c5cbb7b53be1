"""The JSON shapes the LangGraph SDK reads, built from durable session records and checkpoints."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from grapharc.assistants.records import Assistant, AssistantVersion
from grapharc.runs.records import RunRecord
from grapharc.server.api import run_facts
from grapharc.server.api.encoding import json_value
from grapharc.server.api.metadata import contains
from grapharc.server.api.run_config import REQUEST_KEY
from grapharc.session.records import (
    COMPLETED,
    CREATED,
    EXPIRED,
    FAILED,
    PAUSED,
    REJECTED,
    RUNNING,
    Session,
    iso,
)

_THREAD_STATUS = {CREATED: "idle", COMPLETED: "idle", REJECTED: "idle", RUNNING: "busy",
                  PAUSED: "interrupted", FAILED: "error", EXPIRED: "error"}


def assistant(name: str) -> dict[str, Any]:
    """A registered graph as an assistant (one per graph, its id the graph's name)."""
    epoch = datetime.fromtimestamp(0, UTC).isoformat()
    return {"assistant_id": name, "graph_id": name, "name": name, "description": None, "config": {},
            "context": {}, "metadata": {}, "version": 1, "created_at": epoch, "updated_at": epoch}


def created_assistant(record: Assistant) -> dict[str, Any]:
    """An assistant created over the API, with the version its runs use."""
    return {**assistant_version(record.current), "updated_at": iso(record.updated_at),
            "created_at": iso(record.created_at)}


def assistant_version(version: AssistantVersion) -> dict[str, Any]:
    """One version of a created assistant, as the SDK's ``get_versions`` reads it."""
    return {"assistant_id": version.assistant_id, "graph_id": version.graph_id, "name": version.name,
            "description": version.description, "config": version.config, "context": version.context or {},
            "metadata": version.metadata, "version": version.version, "created_at": iso(version.created_at)}


def interrupts(session: Session, payloads: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The thread's open approvals as LangGraph interrupts (the id is the approval's id): the value
    is the question, or a plain interrupt's whole value from ``payloads`` (by approval id)."""
    shown = payloads or {}
    return [{"id": hold.approval_id, "value": shown.get(hold.approval_id, hold.question),
             "grapharc": {"node": hold.node, "kind": hold.kind, "deciders": list(hold.deciders),
                          "expires_at": iso(hold.expires_at)}}
            for hold in session.holds if hold.state == "open"]


def thread(session: Session, values: dict[str, Any] | None = None,
           payloads: Mapping[str, Any] | None = None, *, config: dict[str, Any] | None = None,
           state_updated_at: str | None = None) -> dict[str, Any]:
    """A session as a thread: LangGraph's status words, the graph in its metadata, its interrupts
    (plain ones' values from ``payloads``), the config of its newest run (``thread_config``) and
    when its state last changed (its newest checkpoint's time; its creation's if it has none)."""
    return {"thread_id": session.thread_id, "created_at": iso(session.created_at),
            "updated_at": iso(session.updated_at),
            "state_updated_at": state_updated_at or iso(session.created_at),
            "status": _THREAD_STATUS.get(session.status, "idle"), "metadata": thread_metadata(session),
            "config": config or {}, "values": json_value(values or {}),
            "interrupts": {"": interrupts(session, payloads)}}


def thread_config(newest: RunRecord | None) -> dict[str, Any]:
    """A thread's config as LangGraph's server shows it: its newest run's, as the caller set it
    (configurable keys, and tags and recursion limit when given); none before a run."""
    if newest is None:
        return {}
    given = newest.request.get(REQUEST_KEY) or {}
    return {"configurable": given.get("configurable") or {},
            **{key: given[key] for key in ("tags", "recursion_limit") if given.get(key)}}


def thread_metadata(session: Session) -> dict[str, Any]:
    """A thread's metadata: the thread's own (what clients set), then GraphARC's read-only keys:
    its graph (and, once it has run, its assistant: the graph, as LangGraph's server adds it),
    GraphARC's status word and the outcome."""
    ran = {"assistant_id": session.graph} if session.status != CREATED else {}
    return {**session.metadata, "graph_id": session.graph, **ran, "grapharc_status": session.status,
            "outcome": session.outcome}


def holds_metadata(metadata: dict[str, Any], wanted: dict[str, Any] | None) -> bool:
    """Whether a thread's or assistant's ``metadata`` contains ``wanted`` (LangGraph's metadata
    filter, JSONB containment: a key it does not keep matches nothing)."""
    return contains(metadata, wanted or {})


RUN_FIELDS = ("run_id", "thread_id", "assistant_id", "created_at", "updated_at", "status", "metadata",
              "multitask_strategy", "kwargs")
"""The fields of a run as ``run`` shapes it (what a list's ``select`` may name)."""


def run(record: RunRecord) -> dict[str, Any]:
    """A durable run record as the SDK reads a run, with the arguments it was created with
    (``kwargs``); its metadata (the request's own, as sent, with its assistant, graph and creator:
    ``run_facts``) says any error, and which worker executes it on which attempt (a reclaim after a
    worker's death is attempt 2). A run of a created assistant names it: the record's
    ``assistant_id`` is its graph (what a worker claims runs by), its metadata's the assistant's id."""
    metadata = run_facts.record_metadata(record)
    if record.error:
        metadata["error"] = record.error
    metadata["grapharc"] = {"worker": record.worker, "attempts": record.attempts}
    return {"run_id": record.run_id, "thread_id": record.thread_id,
            "assistant_id": run_facts.assistant_of(record),
            "created_at": iso(record.created_at), "updated_at": iso(record.updated_at),
            "status": record.status, "metadata": metadata, "multitask_strategy": record.multitask_strategy,
            "kwargs": run_facts.kwargs(record)}


def state(snapshot: Any, session: Session | None = None,
          payloads: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A checkpoint as a thread state: values, the nodes due next, the tasks and their interrupts
    (plain ones' values from ``payloads``), its checkpoint and its parent's (as objects and, as
    LangGraph's server also sends them, ids). A task's interrupt that a thread's approval asks about
    carries the approval's id, as the state's ``interrupts`` do: one interrupt, one id."""
    configurable = dict(snapshot.config.get("configurable", {}))
    parent = dict((snapshot.parent_config or {}).get("configurable", {}))
    approvals = {hold.hold_key: hold.approval_id for hold in session.holds} if session is not None else {}
    shaped: dict[str, Any] = json_value({
        "values": dict(snapshot.values), "next": list(snapshot.next),
        "tasks": [{"id": t.id, "name": t.name, "error": str(t.error) if t.error else None,
                   "interrupts": [{"id": approvals.get(i.id, i.id), "value": i.value} for i in t.interrupts],
                   "checkpoint": None, "state": None, "result": t.result} for t in snapshot.tasks],
        "metadata": dict(snapshot.metadata or {}), "created_at": snapshot.created_at,
        "checkpoint": {"thread_id": configurable.get("thread_id"), "checkpoint_ns": "",
                       "checkpoint_id": configurable.get("checkpoint_id")},
        "checkpoint_id": configurable.get("checkpoint_id"),
        "parent_checkpoint": ({"thread_id": parent.get("thread_id"), "checkpoint_ns": "",
                               "checkpoint_id": parent.get("checkpoint_id")} if parent else None),
        "parent_checkpoint_id": parent.get("checkpoint_id"),
        "interrupts": interrupts(session, payloads) if session is not None else [],
    })
    return shaped


def stored_state(values: dict[str, Any], session: Session,
                 payloads: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A thread state with no checkpoint to show (none saved yet, or a stored state its graph can no
    longer prepare a step from): its values as stored, nothing due next (plain interrupts' values
    from ``payloads``)."""
    return {"values": json_value(values), "next": [], "tasks": [], "metadata": {}, "created_at": None,
            "checkpoint": None, "checkpoint_id": None, "parent_checkpoint": None,
            "parent_checkpoint_id": None, "interrupts": interrupts(session, payloads)}
