"""Waiting for a thread's change notification in the PostgreSQL tests."""

from __future__ import annotations

import asyncio
from typing import Any


async def woken_by(waiter: Any, thread: str | None, write: Any) -> bool:
    """Whether ``waiter`` waiting on ``thread`` (on any thread: None) is woken by ``write`` (repeated,
    in case the first write lands before the listening connection is up)."""
    waiting = asyncio.create_task(waiter.wait_for_change(thread, 30) if thread is not None
                                  else waiter.wait_for_any_change(30))
    for _ in range(20):
        await asyncio.to_thread(write)
        done, _ = await asyncio.wait({waiting}, timeout=0.5)
        if done:
            return waiting.result()
    waiting.cancel()
    return False
