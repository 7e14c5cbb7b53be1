"""One event loop for every MCP client session of this process: run by the thread making the calls
while an agent's tools step makes them, and by a background thread the rest of the time.

The ``mcp`` SDK is async (anyio) and the agent harness is sync: a session must stay open for the
agent's life, in the task that opened it, while the harness calls tools from its own thread. A call
handed to a loop on another thread costs thread switches: the agent's thread slept 1.5 to 2 times a
call and the loop's 1.3 to 1.6, where the SDK called directly sleeps once. So a thread inside
:func:`driven` (an agent's tools step, through ``McpToolSource.tool_step``) borrows the loop at its
first call, the background thread parking, and runs each call's coroutine itself with
``run_forever`` until the call's task ends or its deadline passes (one alarm on the loop times the
step's calls). It keeps the loop across the step's calls and gives it back when the step ends, so a
server's pings, notifications and exit are read while the agent is idle (between steps) as before.

Everywhere else a call is handed to whichever thread runs the loop (:meth:`_McpLoop.hand_off`), and
it waits for at most ``timeout`` seconds. The handoff is a lock the caller waits on, released by the
coroutine's own task as its last step, rather than ``asyncio.run_coroutine_threadsafe`` (whose
``concurrent.futures.Future`` costs one more loop turn and a ``Condition`` per call), and the loop is
woken by a :class:`_Doorbell` read once per wake-up rather than asyncio's self-pipe, read until it
raises ``BlockingIOError``. A call handed off while another thread holds the loop makes that thread
give it back: at once if it is between calls, else as its call ends. So several threads may call at
once, as before; each call still runs on the one loop.

Why running the loop from several threads in turn is safe:

- asyncio's loop is not bound to a thread: ``run_forever`` records the thread running it (the
  thread's running loop, ``_thread_id``, the async generator hooks) on entry and clears them on exit,
  and refuses to start while the loop runs anywhere. Its objects are not thread-safe, so exactly one
  thread may run or touch the loop at a time: the one ``_McpLoop`` says owns it (the background
  thread unless parked, else the lender), changed under one ``Condition`` and only while the owner is
  out of ``run_forever``. Other threads reach the loop through the doorbell and
  ``call_soon_threadsafe`` only, both served by whichever thread runs it next.
- Tasks, futures and timers belong to the loop, not to a thread: a session's tasks resume in
  whichever thread runs the loop next. anyio's asyncio backend keys its state by task and by loop
  (its thread-locals serve only its worker threads, which nothing here uses); the SDK's session uses
  anyio memory streams, events and cancel scopes, all loop-bound; GraphARC's stdio transport is
  pipe callbacks on the loop's selector, which the running thread polls.
- A stdio server's exit reaches the loop from asyncio's child watcher thread (Python 3.11's
  ``ThreadedChildWatcher``) through ``call_soon_threadsafe``; a pidfd watcher (3.12) is a reader on
  the loop's selector. Either is seen by whichever thread runs the loop next.
- A call past its deadline is cancelled as a handed-off one is: its caller gets ``TimeoutError`` at
  once and the task ends whenever the loop next runs, so a server that hangs never holds the caller.
- While a tools step holds the loop between calls nobody runs it: what a server sends then waits
  in the pipe until the step's next call or its end. A thread already running an event loop cannot
  run another: its calls are handed off.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
from collections import deque
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager, suppress
from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")

_lock = threading.Lock()
_mcp: _McpLoop | None = None
_steps = threading.local()
"""``depth``: how many :func:`driven` blocks this thread is inside."""


def background_loop() -> asyncio.AbstractEventLoop:
    """The process's MCP loop, started on first use on a daemon thread."""
    return _started().loop


def _started() -> _McpLoop:
    """The process's MCP loop, made on first use (and again if it closed)."""
    global _mcp
    with _lock:
        if _mcp is None or _mcp.loop.is_closed():
            _mcp = _McpLoop()
        return _mcp


@contextmanager
def driven() -> Iterator[None]:
    """While inside, the MCP calls this thread makes run the loop on this thread (see the module
    docstring); on the way out of the outermost block the loop goes back to the background thread."""
    if asyncio._get_running_loop() is not None:  # this thread runs a loop already: it hands calls off
        yield
        return
    depth = getattr(_steps, "depth", 0)
    _steps.depth = depth + 1
    try:
        yield
    finally:
        _steps.depth = depth
        if depth == 0 and _mcp is not None:
            _mcp.give_back()


def run(coroutine: Coroutine[Any, Any, T], timeout: float | None) -> T:
    """Run ``coroutine`` on the MCP loop and return its result; past ``timeout`` seconds
    ``TimeoutError`` is raised at once and the coroutine cancelled on the loop. Inside
    :func:`driven` this thread runs the loop itself when no other thread's call needs it."""
    mcp = _started()
    if getattr(_steps, "depth", 0) and mcp.borrow():
        return mcp.drive(coroutine, timeout)
    return mcp.hand_off(coroutine, timeout)


class _McpLoop:
    """The loop, its doorbell, and which thread may run it: the background thread unless it is
    parked, else the thread it is lent to (see the module docstring)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.bell = _Doorbell(self.loop)
        self._turn = threading.Condition(threading.Lock())
        self._parked = False
        """The background thread is out of ``run_forever`` and waits to be given the loop back."""
        self._parking = False
        """A thread asked the background thread to park (a ``loop.stop`` rung on the doorbell)."""
        self._lender: int | None = None
        """The thread the parked loop is lent to, if any."""
        self._driving = False
        """The lender is running the loop (a call of its own is in flight)."""
        self._handed = 0
        """Calls handed off and not yet answered: while there are any the background thread runs the loop."""
        self._timed: _Ending | None = None
        """The driven call in flight, which ``_alarm`` times (touched only by the loop's runner)."""
        self._alarm: asyncio.TimerHandle | None = None
        threading.Thread(target=self._serve, name="grapharc-mcp", daemon=True).start()

    # -- the background thread --------------------------------------------------------------------

    def _serve(self) -> None:
        """Run the loop whenever it is not parked; park when a borrower asks (a stop for any other
        reason, a lender's stale one, just runs it again)."""
        while True:
            with self._turn:
                while self._parked:
                    self._turn.wait()
            self.loop.run_forever()
            with self._turn:
                if self._parking:
                    self._parking = False
                    self._parked = True
                    self._turn.notify_all()

    def _unpark(self) -> None:
        """(Holding ``_turn``, the loop not running anywhere.) Give the loop to the background thread."""
        self._lender = None
        self._parked = False
        self._turn.notify_all()

    # -- a thread driving the loop ----------------------------------------------------------------

    def borrow(self) -> bool:
        """Make the calling thread the loop's runner for its next call; False when another thread
        holds it or has a call handed off (this call is then handed off too)."""
        me = threading.get_ident()
        with self._turn:
            if self._lender == me:
                self._driving = True
                return True
            if self._lender is not None or self._handed:
                return False
            if not self._parked:
                if not self._parking:
                    self._parking = True
                    self.bell.ring(self.loop.stop)
                while self._parking:
                    self._turn.wait()
            if not self._parked or self._lender is not None:
                return False
            if self._handed:  # a call was handed off while the background thread parked: it serves it
                self._unpark()
                return False
            self._lender = me
            self._driving = True
            return True

    def drive(self, coroutine: Coroutine[Any, Any, T], timeout: float | None) -> T:
        """(After ``borrow``.) Run ``coroutine`` on this thread, then let go of the loop if a call
        was handed off meanwhile."""
        try:
            return self._run_here(coroutine, timeout)
        finally:
            self._done_driving()

    def _run_here(self, coroutine: Coroutine[Any, Any, T], timeout: float | None) -> T:
        """Run ``coroutine`` as a task until it ends or its deadline passes; a task past its
        deadline is cancelled (it ends when the loop next runs) and ``TimeoutError`` raised."""
        loop = self.loop
        ending = _Ending(loop, None if timeout is None else loop.time() + timeout)
        task = loop.create_task(_stopping_after(coroutine, ending))
        self._time(ending)
        try:
            while not (task.done() or ending.expired):
                loop.run_forever()
        finally:
            self._timed = None
            if not task.done():  # past its deadline, or this thread was interrupted
                ending.waited = False
                task.cancel()
        if not task.done():
            raise TimeoutError(f"no answer within {timeout:g} s")
        return task.result()

    def _time(self, ending: _Ending) -> None:
        """Make ``ending`` the driven call the alarm times. One alarm serves a step's calls: set
        for the first call's deadline, it is moved only when a call's deadline comes sooner, and
        when it rings for a call already answered it is set again for the call now timed (a timer
        set and cancelled per call cost 18 thousand instructions)."""
        self._timed = ending
        deadline = ending.deadline
        alarm = self._alarm
        if deadline is None or (alarm is not None and alarm.when() <= deadline):
            return
        if alarm is not None:
            alarm.cancel()
        self._alarm = self.loop.call_at(deadline, self._ring)

    def _ring(self) -> None:
        """On the loop: the alarm; the call it timed out, else it is set for the call timed now."""
        self._alarm = None
        ending = self._timed
        if ending is None or ending.deadline is None:
            return
        if ending.deadline <= self.loop.time():
            ending.expire()
        else:
            self._alarm = self.loop.call_at(ending.deadline, self._ring)

    def _done_driving(self) -> None:
        with self._turn:
            self._driving = False
            if self._handed:
                self._unpark()

    def give_back(self) -> None:
        """Return the loop to the background thread if this thread holds it (a tools step's end)."""
        if self._lender != threading.get_ident():  # only this thread makes it this thread's
            return
        with self._turn:
            if self._lender == threading.get_ident():
                self._unpark()

    # -- a call handed to the loop's runner -------------------------------------------------------

    def hand_off(self, coroutine: Coroutine[Any, Any, T], timeout: float | None) -> T:
        """Run ``coroutine`` on whichever thread runs the loop and wait for it (see the module
        docstring); a lender between calls gives the loop back to the background thread first."""
        with self._turn:
            self._handed += 1
            if self._parked and not self._parking and not self._driving:
                self._unpark()
        try:
            return self._handed_off(coroutine, timeout)
        finally:
            with self._turn:
                self._handed -= 1

    def _handed_off(self, coroutine: Coroutine[Any, Any, T], timeout: float | None) -> T:
        handoff = _Handoff(coroutine)
        self.bell.ring(handoff.start)
        if not handoff.finished.acquire(timeout=-1 if timeout is None else timeout):
            self.bell.ring(handoff.cancel)
            raise TimeoutError(f"no answer within {timeout:g} s")
        if handoff.error is not None:
            raise handoff.error
        return cast(T, handoff.result)


class _Ending:
    """Stops the loop a calling thread drives when its call's task ends (while it still waits for
    it) or its deadline (``loop.time()``, None: none) passes."""

    __slots__ = ("deadline", "expired", "loop", "waited")

    def __init__(self, loop: asyncio.AbstractEventLoop, deadline: float | None) -> None:
        self.loop = loop
        self.deadline = deadline
        self.expired = False
        self.waited = True

    def ended(self) -> None:
        if self.waited:
            self.loop.stop()

    def expire(self) -> None:
        self.expired = True
        self.loop.stop()


async def _stopping_after(coroutine: Coroutine[Any, Any, T], ending: _Ending) -> T:
    """``coroutine``'s result, the loop told to stop in the task's last step: a callback of the
    task's end would cost the loop one more turn."""
    _name_asyncio()
    try:
        return await coroutine
    finally:
        ending.ended()


def _sniffio_library() -> contextvars.ContextVar[str | None] | None:
    """sniffio's variable naming the running async library, if sniffio is installed (anyio without
    it takes a running asyncio loop for asyncio at once)."""
    try:
        from sniffio import current_async_library_cvar
    except ImportError:
        return None
    return current_async_library_cvar


_async_library = _sniffio_library()


def _name_asyncio() -> None:
    """Name asyncio as this task's async library (in the task's own context), as ``anyio.run``
    does for the tasks it runs: else every anyio call the SDK's session makes, six a call, sniffs
    for the library again."""
    if _async_library is not None:
        _async_library.set("asyncio")


class _Doorbell:
    """Callbacks another thread asks the loop to run, in the order asked, each in the context it was
    asked from (as ``call_soon_threadsafe`` runs them): queued, and one byte written to a pipe the
    loop watches, which the loop reads once before running everything queued."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._read_end, self._write_end = os.pipe()
        os.set_blocking(self._read_end, False)
        os.set_blocking(self._write_end, False)
        self._queued: deque[tuple[contextvars.Context, Callable[[], None]]] = deque()
        loop.add_reader(self._read_end, self._answer)

    def ring(self, callback: Callable[[], None]) -> None:
        """From any thread: have the loop run ``callback`` soon."""
        self._queued.append((contextvars.copy_context(), callback))
        with suppress(BlockingIOError):  # a pipe full of rings not yet answered wakes the loop already
            os.write(self._write_end, b"\0")

    def _answer(self) -> None:
        """On the loop: take the rings (a byte each, or many) and run what was queued before them."""
        os.read(self._read_end, 4096)
        queued = self._queued
        while queued:
            context, callback = queued.popleft()
            context.run(callback)


class _Handoff(Generic[T]):
    """One coroutine run on the loop for a waiting thread: its outcome, and the lock that says
    it is there (held until the coroutine ends)."""

    def __init__(self, coroutine: Coroutine[Any, Any, T]) -> None:
        self.coroutine = coroutine
        self.finished = threading.Lock()
        self.finished.acquire()
        self.task: asyncio.Task[None] | None = None
        self.result: T | None = None
        self.error: BaseException | None = None

    def start(self) -> None:
        """On the loop: run the coroutine as a task of its own."""
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        _name_asyncio()
        try:
            self.result = await self.coroutine
        except BaseException as exc:  # handed to the waiting thread, which raises it
            self.error = exc
        finally:
            self.finished.release()

    def cancel(self) -> None:
        """On the loop: stop the coroutine (its caller stopped waiting; ``start`` came first)."""
        if self.task is not None:
            self.task.cancel()
