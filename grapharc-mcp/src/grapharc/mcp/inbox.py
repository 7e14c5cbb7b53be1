"""The read stream a ``ClientSession`` takes its server's messages from, filled by a transport's
asyncio protocol callback.

Hand-written because the SDK's own (an anyio memory object stream) costs a loop turn on every
receive (its opening checkpoint) and, with no buffer, a task on the sending side to wait for the
session: here the protocol appends each message as it is read, and ``receive`` takes it without
yielding when one is there, and waits on one future per wait otherwise. It honours the SDK's
``ReadStream`` protocol as the memory stream does: ``anyio.EndOfStream`` (the end of iteration)
once the transport ended it and every message was taken, ``anyio.ClosedResourceError`` once the
session closed it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from types import TracebackType

import anyio
from mcp.shared.message import SessionMessage

Item = SessionMessage | Exception
"""What a transport hands the session: a message, or the error that one line could not be parsed."""


class Inbox:
    """Messages in the order they were read, for one receiver (the session's dispatcher).

    ``on_backlog`` is called when more than one message waits (the transport stops reading: a
    server cannot make the client hold more than one read's worth of messages) and ``on_drained``
    once none does (it reads again).
    """

    def __init__(self, on_backlog: Callable[[], None], on_drained: Callable[[], None]) -> None:
        self._items: deque[Item] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._ended = False
        self._closed = False
        self._held_back = False
        self._on_backlog = on_backlog
        self._on_drained = on_drained

    # -- the transport's side ---------------------------------------------------------------------

    def put(self, item: Item) -> None:
        """Add a message read from the server (dropped once the session closed the stream)."""
        if self._closed:
            return
        self._items.append(item)
        self._wake()
        if len(self._items) > 1 and not self._held_back:
            self._held_back = True
            self._on_backlog()

    def end(self) -> None:
        """No more messages will come: the receiver ends after the ones already here."""
        self._ended = True
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- the session's side ---------------------------------------------------------------------

    async def receive(self) -> Item:
        """The next message, waiting for one only when none is here."""
        while not self._items:
            if self._closed:
                raise anyio.ClosedResourceError
            if self._ended:
                raise anyio.EndOfStream
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        item = self._items.popleft()
        if not self._items and self._held_back:
            self._held_back = False
            self._on_drained()
        return item

    async def aclose(self) -> None:
        """Close the stream: later messages are dropped and ``receive`` raises."""
        self._closed = True
        self._items.clear()
        self._wake()

    def __aiter__(self) -> Inbox:
        return self

    async def __anext__(self) -> Item:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Inbox:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc_val: BaseException | None,
                        exc_tb: TracebackType | None) -> None:
        await self.aclose()
