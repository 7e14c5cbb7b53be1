"""What the tools answer: a thread as one JSON document, read from the session store.

A run tool and ``thread_status`` answer the same document: the thread's record (status, outcome or
error, last node, lease), its state values, and the open approvals it waits on (``pending``), each
with the arguments it is about and how a person decides it. Values JSON cannot hold as they are (NaN, sets,
bytes, datetimes, objects) are written the way JSON can (null, lists, base64, ISO 8601, repr).
Every function here reads stores and blocks; the server calls them off its event loop.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic_core import to_jsonable_python

from grapharc.errors import GraphARCError
from grapharc.session.asked import asked_about
from grapharc.session.manager import SessionManager
from grapharc.session.records import OPEN, PAUSED, Approval, Session


def jsonable(value: Any) -> Any:
    """``value`` as JSON data (see the module docstring for what is converted how)."""
    return to_jsonable_python(value, fallback=repr, bytes_mode="base64", inf_nan_mode="null")


def thread_document(manager: SessionManager, thread_id: str) -> dict[str, Any]:
    """Where thread ``thread_id`` stands, its values and its open approvals
    (``UnknownSessionError`` if there is no such thread)."""
    session = manager.get(thread_id)
    document = session.to_dict(time.time())
    del document["holds"]  # the open ones are under "pending", with their arguments
    document["values"], unreadable = _values(manager, thread_id)
    if unreadable is not None:
        document["values_unavailable"] = unreadable
    document["pending"] = [approval_document(manager, hold, session) for hold in session.holds
                           if hold.state == OPEN]
    return jsonable(document)  # type: ignore[no-any-return]


def pending_documents(manager: SessionManager, thread_id: str | None = None) -> list[dict[str, Any]]:
    """Every open approval of every paused thread (or of ``thread_id`` only, which must exist),
    the oldest asked first."""
    sessions = [manager.get(thread_id)] if thread_id is not None else manager.list(PAUSED)
    found = [(hold, session) for session in sessions for hold in session.holds if hold.state == OPEN]
    found.sort(key=lambda pair: pair[0].created_at)
    return [approval_document(manager, hold, session) for hold, session in found]


def approval_document(manager: SessionManager, approval: Approval, session: Session) -> dict[str, Any]:
    """One open approval: the record, its thread's graph, the arguments it is about, and how a
    person decides it (never through MCP)."""
    document = {**approval.to_dict(), "graph": session.graph,
                "decide_with": f"grapharc session approve {approval.thread_id} --approval "
                               f"{approval.approval_id} (or reject), or the approval inbox"}
    try:
        document["arguments"] = jsonable(asked_about(manager, approval, session, whole_state=True))
    except GraphARCError as exc:
        document["arguments"], document["arguments_unavailable"] = None, str(exc)
    return document


def _values(manager: SessionManager, thread_id: str) -> tuple[dict[str, Any] | None, str | None]:
    """The thread's state values, or None and why they cannot be read here (its graph is not
    registered in this process)."""
    try:
        return manager.values(thread_id), None
    except GraphARCError as exc:
        return None, str(exc)
