"""What an approval's page shows a person so they decide on evidence: the state the decision rests
on, the path that led here (a drawing) and the thread's audit trail (a timeline).

The fields shown are those the node's approvers are declared to see (``Approvers.shown_fields``, on
the node's approvers or its gate), read from the graph this server registered; a graph it did not
register, or a node that declares none, shows the fields the path so far wrote (the audit trail's
node entries), each value as it is. Values are read from the thread's newest checkpoint as saved,
without its graph, and only while the approval is open: once decided, the thread has moved on and
the page shows who decided and the path, not a state the decision no longer rests on. The drawing
and the timeline add the registered graph's declared edges, and its trace when the graph writes one
to a file (``GraphARC(trace=path)``); without them they are drawn from the audit trail alone.
``thread_story`` makes the drawing and the timeline of any thread (the thread page's too).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from grapharc.errors import GraphARCError
from grapharc.server.inbox import drawing, humane
from grapharc.server.inbox.timeline import Moment, timeline
from grapharc.server.service.sessions import Details, Sessions
from grapharc.session.approvals import Shown
from grapharc.session.records import OPEN, AuditEntry, AuditKind, Session
from grapharc.session.registry import RegisteredGraph
from grapharc.trace.reader import read_events


@dataclass(frozen=True, slots=True)
class ShownField:
    """One field on the page: its label, and its value as HTML people read."""

    field: str
    label: str
    value: Markup


@dataclass(frozen=True, slots=True)
class ThreadStory:
    """How a thread got where it is: its path drawn, its audit trail as a timeline, its entries, and
    its graph as this server registered it (None: not registered here)."""

    drawing: Markup
    timeline: list[Moment]
    entries: list[AuditEntry]
    registered: RegisteredGraph | None


@dataclass(frozen=True, slots=True)
class Evidence:
    """Everything an approval's page shows besides the approval record itself."""

    fields: list[ShownField]
    declared: bool
    """Whether the fields are the ones the graph declares (else the ones the path wrote)."""
    story: ThreadStory


def thread_story(sessions: Sessions, session: Session) -> ThreadStory:
    """The drawing and timeline of ``session``'s thread (the approval page's, and the thread page's):
    over its registered graph's edges and its trace file when there are, else its audit trail alone
    (a blocking read: run it in a worker thread)."""
    registered = sessions.manager.graphs.get(session.graph) if sessions.serves(session.graph) else None
    entries = sessions.manager.audit(session.thread_id)
    trace = trace_events(registered, session.thread_id)
    edges = drawing.declared_edges(registered.builder) if registered is not None else []
    paused = next((hold.node for hold in session.holds if hold.state == OPEN), None)
    path = (drawing.path_from_trace(trace, edges, paused) if trace
            else drawing.path_from_audit(entries, edges, paused))
    title = f"The path of thread {session.thread_id} through {session.graph}"
    picture = Markup(drawing.draw_path(path, title=title))  # noqa: S704 -- draw_path escapes every text
    return ThreadStory(picture, timeline(entries, trace), entries, registered)


def evidence(sessions: Sessions, found: Details) -> Evidence:
    """The evidence of the approval ``found`` (a blocking read: run it in a worker thread)."""
    approval, session = found.approval, found.session
    story = thread_story(sessions, session)
    registered = story.registered
    declared = registered.shown_fields(approval.node) if registered is not None else None
    shown = declared if declared is not None else _written(story.entries)
    fields = _fields(sessions.saved_values(session.thread_id), shown) if approval.state == OPEN else []
    return Evidence(fields, declared is not None, story)


def _written(entries: list[AuditEntry]) -> tuple[Shown, ...]:
    """The fields the thread's nodes wrote so far, in the order first written."""
    names: dict[str, None] = {}
    for entry in entries:
        writes = entry.detail.get("writes") if entry.kind == AuditKind.NODE else None
        names.update(dict.fromkeys(str(name) for name in writes or ()))
    return tuple(Shown(name) for name in names)


def _fields(values: Mapping[str, Any], shown: tuple[Shown, ...]) -> list[ShownField]:
    """Each shown field the state holds, labelled, its value formatted as declared."""
    return [ShownField(item.field, item.label or humane.label(item.field),
                       humane.value_html(values[item.field], item.format))
            for item in shown if item.field in values]


def trace_events(registered: RegisteredGraph | None, thread_id: str) -> list[dict[str, Any]]:
    """The thread's trace events, when its registered graph writes its trace to a file that exists
    and reads as a trace (none otherwise: the page is drawn from the audit trail)."""
    target = registered.builder.trace if registered is not None else None
    if not isinstance(target, str | os.PathLike) or not os.path.exists(target):
        return []
    try:
        return list(read_events(target, thread_id=thread_id))
    except GraphARCError:
        return []
