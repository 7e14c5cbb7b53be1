"""Drive an async iterator in a task of its own context, handing its items over one by one.

The governed async streams run LangGraph's iterator in a task created with a context
that holds the run context, so that context never leaks into the consumer's (an
abandoned async generator is finalised later, elsewhere, and could not reset it).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextvars import Context
from typing import Any

_CHUNK, _DONE, _FAILED = 0, 1, 2


async def _produce(chunks: AsyncIterator[Any], queue: asyncio.Queue[tuple[int, Any]]) -> None:
    """Pump ``chunks`` into ``queue``; the consumer re-raises a failure as its own."""
    try:
        async for chunk in chunks:
            await queue.put((_CHUNK, chunk))
    except asyncio.CancelledError:
        raise
    except BaseException as exc:
        await queue.put((_FAILED, exc))
        return
    await queue.put((_DONE, None))


class ContextPump:
    """An async iterator over ``chunks``, consumed in a task running in ``context``."""

    def __init__(self, chunks: AsyncIterator[Any], context: Context) -> None:
        self._queue: asyncio.Queue[tuple[int, Any]] = asyncio.Queue(maxsize=1)
        self._producer = asyncio.create_task(_produce(chunks, self._queue), context=context)

    def __aiter__(self) -> ContextPump:
        return self

    async def __anext__(self) -> Any:
        kind, value = await self._queue.get()
        if kind == _CHUNK:
            return value
        if kind == _DONE:
            raise StopAsyncIteration
        raise value

    async def aclose(self) -> None:
        """Stop the producer (if it is still running) and wait for it."""
        self._producer.cancel()
        await asyncio.gather(self._producer, return_exceptions=True)
