"""The checkpoints each live turn's audit scan last prepared, kept for readers in the same process.

A turn scans the thread's newest checkpoints after every node to put completions on the audit
trail; a server's stream, woken by that very write, needs the same checkpoints to render the node
(what it wrote, the values after it) and read them again from disk. The turn leaves what it
prepared here, by thread and superstep, until it ends; a reader takes a checkpoint from here when
it holds what the reader needs and reads the durable one otherwise. A checkpoint's values never
change once saved, and a node's result in one is its saved writes, so both views agree.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from grapharc.session.history import step_of
from grapharc.session.named import Named


class ScannedCheckpoints:
    """Per thread with a turn live in this process: its scan's newest snapshot of each superstep."""

    def __init__(self) -> None:
        self._by_thread: dict[str, dict[int, Any]] = {}

    def keep(self, thread_id: str, history: Iterable[Any]) -> None:
        """Remember the checkpoints a scan read (``history``, newest first) over older ones of the
        same steps; one with tasks and no values never over one with values, and one with neither
        holds nothing a reader needs (skipped). The thread's map is replaced, never changed in
        place, so a reader on another thread never sees one half written."""
        steps = dict(self._by_thread.get(thread_id, {}))
        for snapshot in reversed(list(history)):
            step = step_of(snapshot)
            if not _valueless(snapshot) or (snapshot.tasks and _valueless(steps.get(step))):
                steps[step] = snapshot
        self._by_thread[thread_id] = steps

    def at(self, thread_id: str, step: int, *, values: bool = False) -> Any:
        """The checkpoint of ``step`` the thread's live turn last read, or None (also when the
        reader wants its ``values`` and the scan only named its tasks)."""
        scanned = self._by_thread.get(thread_id, {}).get(step)
        return None if values and _valueless(scanned) else scanned

    def forget(self, thread_id: str) -> None:
        """Drop the thread's snapshots (its turn ended)."""
        self._by_thread.pop(thread_id, None)


def _valueless(snapshot: Any) -> bool:
    """Whether ``snapshot`` is none, or a ``Named`` one without the state's values."""
    return snapshot is None or (isinstance(snapshot, Named) and snapshot.values is None)
