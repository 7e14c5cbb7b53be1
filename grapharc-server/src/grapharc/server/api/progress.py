"""The wake-up a process's streams and joins wait on: set whenever a run here makes progress.

One per server process: a run executing here wakes every waiter when a node's writes are saved
and audited, and when it ends. A waiter takes ``changed()`` before it reads the durable records,
so progress made after its read is not missed; runs executing on another worker are seen by
polling (``grapharc.server.api.streaming.wait_for_progress``).
"""

from __future__ import annotations

import asyncio
from typing import Any


class Progress:
    """An event replaced each time it is set, so each waiter sees the progress after its read."""

    def __init__(self) -> None:
        self._changed = asyncio.Event()

    def changed(self) -> asyncio.Event:
        """The event the next progress sets."""
        return self._changed

    def notify(self, *_: Any) -> None:
        """Wake every waiter (fits the session layer's ``on_update``)."""
        self._changed.set()
        self._changed = asyncio.Event()
