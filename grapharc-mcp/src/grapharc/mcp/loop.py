"""One event loop on a background thread, where every MCP client session of this process lives.

The ``mcp`` SDK is async (anyio) and the agent harness is sync: a session must stay open for the
agent's life, in the task that opened it, while the harness calls tools from its own thread.
:func:`background_loop` starts the loop once (a daemon thread), and :func:`run` hands it a
coroutine and waits for its result, for at most ``timeout`` seconds.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def background_loop() -> asyncio.AbstractEventLoop:
    """The process's MCP loop, started on first use on a daemon thread."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="grapharc-mcp", daemon=True).start()
            _loop = loop
        return _loop


def run(coroutine: Coroutine[Any, Any, T], timeout: float | None) -> T:
    """Run ``coroutine`` on the background loop and return its result; past ``timeout`` seconds it
    is cancelled and ``TimeoutError`` raised (the coroutine's own timeouts should come first)."""
    future = asyncio.run_coroutine_threadsafe(coroutine, background_loop())
    try:
        return future.result(timeout)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise TimeoutError(f"no answer within {timeout:g} s") from None
