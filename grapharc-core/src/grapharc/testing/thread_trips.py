"""Count a code path's trips to worker threads, so a test can pin how many an async path makes.

A trip through ``grapharc.stores.offload.to_thread`` (the store calls' pool) costs a hand-off each way
between the event loop and a thread; the server's async paths batch their store work to keep
those few. ``thread_trips`` records every function sent that way inside its block.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from grapharc.stores import offload


class ThreadTrips(list[Callable[..., Any]]):
    """The functions sent to a worker thread, in the order they were sent."""

    def names(self) -> list[str]:
        """Each function's ``__name__`` (its ``repr`` when it has none, as a ``partial``)."""
        return [getattr(func, "__name__", repr(func)) for func in self]


@contextmanager
def thread_trips() -> Iterator[ThreadTrips]:
    """Record every ``offload.to_thread`` call made inside the block; the original is restored after."""
    trips = ThreadTrips()
    original = offload.to_thread

    async def counted(func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        trips.append(func)
        return await original(func, *args, **kwargs)

    offload.to_thread = counted
    try:
        yield trips
    finally:
        offload.to_thread = original
