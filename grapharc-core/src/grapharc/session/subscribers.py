"""Update subscribers: callers that watch each node's writes as a run makes them, and record
watchers, told each time a session turn writes to its thread's audit trail, and of which kinds of
entry it wrote (a server wakes the streams reading that trail, and a stream whose modes render none
of those kinds need not read it again).

A subscriber only watches. One that raises (a closed pipe, a bug in a printer) is logged and
dropped for the rest of the run, so it can never fail the node, or the run, that it was shown.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from grapharc.session.records import AuditKind

Written = frozenset[str] | None
"""The kinds of the audit entries one write put on a thread's trail (``AuditKind`` values, or
``RUN_ENTRY``); None: it does not say (any kind)."""
OnUpdate = Callable[[str, dict[str, Any]], None]
OnRecord = Callable[[Written], None]
RUN_ENTRY = "run"
"""The kind of the entry a turn writes for each run it made (``SessionStore.record_run``)."""
CLAIM_ENTRIES: frozenset[str] = frozenset({AuditKind.CLAIMED, AuditKind.RECLAIMED, AuditKind.DECIDED})
"""What a turn's claim of its thread writes (a decision, then the claim; or a reclaim)."""
NODE_ENTRIES: frozenset[str] = frozenset({AuditKind.NODE})
RUN_ENTRIES: frozenset[str] = frozenset({RUN_ENTRY})

_log = logging.getLogger(__name__)


class GuardedSubscriber:
    """Calls ``on_update`` with each node's writes, and ``on_record`` after each audit write,
    each until it raises once, then no more."""

    def __init__(self, on_update: OnUpdate | None, thread_id: str, on_record: OnRecord | None = None) -> None:
        self.on_update = on_update
        self.on_record = on_record
        self.thread_id = thread_id

    def recorded(self, kinds: Written = None) -> None:
        """Tell the record watcher the turn has just written entries of ``kinds`` (None: of any
        kind) to the thread's audit trail."""
        if self.on_record is None:
            return
        try:
            self.on_record(kinds)
        except Exception:
            _log.warning("thread %s: the record watcher raised; it is no longer called this run",
                         self.thread_id, exc_info=True)
            self.on_record = None

    def show(self, chunk: Any) -> None:
        """Tell the subscriber what the nodes of ``chunk`` (one ``updates`` stream item) wrote."""
        if self.on_update is None or not isinstance(chunk, dict):
            return
        for node, update in chunk.items():
            if node.startswith("__"):
                continue
            try:
                self.on_update(node, update if isinstance(update, dict) else {})
            except Exception:
                _log.warning("thread %s: the update subscriber raised on node %s; it is no longer "
                             "called this run", self.thread_id, node, exc_info=True)
                self.on_update = None
                return
