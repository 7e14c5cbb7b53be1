"""Threads that run blocking calls for an event loop: one queue of calls, each result handed back.

An event loop awaits a store call run on another thread; the trip there and back is most of a
short call's cost. ``loop.run_in_executor`` with a ``ThreadPoolExecutor`` makes it through two
futures (the executor's and the loop's, chained by callbacks on both sides) and a work item, about
twice the CPU of this: one ``SimpleQueue`` the threads take calls from, and the loop's own future,
settled on the loop with ``call_soon_threadsafe`` (a store pool's trip measured about 75 µs of CPU
against 120 through the executor, on a 2-core machine; a server's run makes some twenty of them).

With one thread, calls run one at a time in the order sent (a SQLite connection's own thread:
``grapharc.sqlite.one_trip_saver``); with several, as they come (``grapharc.stores.offload``).
A call whose caller stopped waiting before it began (its future cancelled) is skipped, as an
executor skips a cancelled work item. The threads are daemons, stopped at interpreter exit after
the calls already sent, so a store write under way is finished rather than cut short.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_Call = tuple[asyncio.Future[Any], Callable[[], Any]]


class CallThreads:
    """``count`` threads named ``name`` (``name_<i>`` when several) running the calls sent to them."""

    def __init__(self, name: str, count: int = 1) -> None:
        self._calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._threads = [threading.Thread(target=self._serve, name=name if count == 1 else f"{name}_{i}",
                                          daemon=True) for i in range(count)]
        for thread in self._threads:
            thread.start()
        _running.add(self)

    async def run(self, work: Callable[[], T]) -> T:
        """``work()`` on one of the threads; its result (or its exception, raised here)."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._calls.put((future, work))
        return await future

    def stop(self) -> None:
        """End the threads once the calls sent before have run."""
        _running.discard(self)
        for _thread in self._threads:
            self._calls.put(None)
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join()

    def _serve(self) -> None:
        while (call := self._calls.get()) is not None:
            future, work = call
            if future.cancelled():  # its caller stopped waiting before it began: not begun at all
                continue
            try:
                result = work()
            except BaseException as exc:  # the caller's to handle, like any result
                _hand_back(future, _fail, exc)
            else:
                _hand_back(future, _settle, result)


def _hand_back(future: asyncio.Future[Any], settle: Callable[[asyncio.Future[Any], Any], None],
               outcome: Any) -> None:
    """Settle ``future`` with ``outcome`` on its loop (nothing to do once that loop has closed)."""
    with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody awaits the result
        future.get_loop().call_soon_threadsafe(settle, future, outcome)


def _settle(future: asyncio.Future[Any], result: Any) -> None:
    if not future.done():  # not if the awaiting call was cancelled meanwhile
        future.set_result(result)


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)


_running: weakref.WeakSet[CallThreads] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    """At interpreter exit, let every set of threads finish the calls sent to it, then end."""
    for threads in list(_running):
        threads.stop()
