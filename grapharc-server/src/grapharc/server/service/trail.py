"""A thread's audit trail as NDJSON, one entry a line: what the API's ``/threads/{id}/trace`` and
the inbox's ``/inbox/threads/{id}/trace`` both send, so the two cannot disagree."""

from __future__ import annotations

import json

from grapharc.session.manager import SessionManager


def trail_ndjson(manager: SessionManager, thread_id: str) -> str:
    """The thread's trail read and rendered in one call (``UnknownSessionError`` for an unknown
    thread); one string, as a sync iterator of lines would cost a trip to a thread per line."""
    manager.get(thread_id)
    return "".join(json.dumps(entry.to_dict()) + "\n" for entry in manager.audit(thread_id))
