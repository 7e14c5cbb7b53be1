"""The server process's one SessionManager, and what the routes read through it.

The API opens it with the operator's graphs registered (``grapharc.server.api.context``), and
closes it as the app stops.
"""

from __future__ import annotations

from typing import Any

from grapharc.session.manager import SessionManager


class Sessions:
    """The sessions as this process serves them, through its one ``manager``."""

    def __init__(self, manager: SessionManager) -> None:
        self.manager = manager

    def scanned_at(self, thread_id: str, step: int) -> Any:
        """The checkpoint of superstep ``step`` as a live turn of the thread here last scanned it
        (None: none), so a stream renders a node without reading it again."""
        return self.manager.scanned_at(thread_id, step)

    async def aclose(self) -> None:
        """Close the manager (its async checkpointer on this loop, then its stores)."""
        await self.manager.aclose()
