"""Wall-clock deadlines delivered as interrupts into a running node, not polled between nodes.

On the main thread the deadline is a SIGALRM from ``signal.setitimer``: the signal interrupts a
blocking ``time.sleep`` or socket read and the handler raises inside the node. Any other thread
receives an asynchronous exception (``PyThreadState_SetAsyncExc``) from a watchdog thread. That
exception cannot unwind a thread sitting inside a C call (``time.sleep``, a socket read): it lands
when the call returns, so a worker blocked for 30 s in one call is cut off after those 30 s, not
at the deadline. Async nodes use ``asyncio.timeout``, which cancels the awaiting task.

Inside the block the interrupt is a ``DeadlineInterrupt``, a ``BaseException`` like asyncio's
``CancelledError``, so ``except Exception`` in node code or a retry wrapper cannot swallow it. The
``with`` statement turns it into ``NodeTimeoutError``, and raises ``NodeTimeoutError`` whenever the
deadline expired inside the block, even if the node caught the interrupt and returned normally: a
node that overran never gets its result past the boundary.

The standard library has no deadline that interrupts a blocking call, so this is written here.
"""

from __future__ import annotations

import asyncio
import math
import signal
import threading
from abc import ABC, abstractmethod
from contextlib import AbstractAsyncContextManager, AbstractContextManager, nullcontext, suppress
from time import monotonic
from types import FrameType, TracebackType
from typing import Any, Literal

from grapharc.errors import GraphARCError
from grapharc.runtime.watchdog import Watchdog

MAX_DEADLINE_SECONDS = 31 * 24 * 3600.0
"""The longest single timer armed. Longer (or infinite) deadlines are re-armed when it expires,
so ``inf`` or ``1e10`` never reach ``setitimer`` (which rejects them) and never fire early."""

_MIN_DELAY = 1e-6
_TOLERANCE = 1e-3
_NO_DEADLINE = nullcontext()


class NodeTimeoutError(GraphARCError):
    """A node ran past its deadline; whatever it was about to return is discarded."""

    def __init__(self, node: str, seconds: float) -> None:
        super().__init__(
            f"node {node!r} overran its deadline of {seconds:g} s",
            hint="raise Budget(max_seconds=...) or make the node finish sooner",
        )
        self.node = node
        self.seconds = seconds

    def __reduce__(self) -> tuple[type[NodeTimeoutError], tuple[str, float]]:
        return (type(self), (self.node, self.seconds))


class InvalidDeadlineError(GraphARCError):
    """A deadline was given a value that is not a number of seconds."""


class DeadlineInterrupt(BaseException):
    """Delivered into a node whose deadline expired; the ``with`` turns it into NodeTimeoutError.

    It only escapes as itself if it lands in the few bytecodes between the end of the block and
    the start of the deadline's cleanup on a worker thread.
    """


def deadline(seconds: float | None, *, node: str) -> AbstractContextManager[None]:
    """Interrupt the enclosed block after ``seconds`` with NodeTimeoutError naming ``node``.

    ``None`` means no deadline and costs nothing; zero or negative seconds, or so few that they
    run out while the timer is armed, raise at once.
    """
    if seconds is None:
        return _NO_DEADLINE
    seconds = _validated(seconds, node)
    if _alarm_usable():
        return _AlarmDeadline(seconds, node)
    return _ThreadDeadline(seconds, node)


def async_deadline(seconds: float | None, *, node: str) -> AbstractAsyncContextManager[None]:
    """Cancel the enclosed ``await``s after ``seconds`` and raise NodeTimeoutError naming ``node``.

    Cancellation only reaches code that awaits; a blocking call inside a coroutine holds the loop.
    """
    if seconds is None:
        return _NO_DEADLINE
    return _AsyncDeadline(_validated(seconds, node), node)


def _validated(seconds: float, node: str) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or math.isnan(seconds):
        raise InvalidDeadlineError(
            f"deadline for node {node!r} must be a number of seconds or None, got {seconds!r}"
        )
    return float(seconds)


def _alarm_usable() -> bool:
    """SIGALRM works only on the main thread, where setitimer exists, over a Python-visible
    handler (``None`` means a handler installed from C that could not be put back)."""
    return (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGALRM) is not None
    )


def _clamped(delay: float) -> float:
    return min(max(delay, _MIN_DELAY), MAX_DEADLINE_SECONDS)


class _Deadline(ABC):
    """What every synchronous deadline shares: arming on entry and the conversion on exit."""

    __slots__ = ("_expires", "_fired", "_node", "_seconds")

    def __init__(self, seconds: float, node: str) -> None:
        self._seconds = seconds
        self._node = node
        self._fired = False
        self._expires = math.inf

    def __enter__(self) -> None:
        if self._seconds <= 0:
            raise NodeTimeoutError(self._node, self._seconds)
        self._fired = False
        self._expires = monotonic() + self._seconds
        self._arm()
        if self._fired:  # it expired while being armed: the block never starts
            with suppress(DeadlineInterrupt):
                self._disarm()
            raise NodeTimeoutError(self._node, self._seconds)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> Literal[False]:
        late: DeadlineInterrupt | None = None
        while True:
            try:
                self._disarm()
                break
            except DeadlineInterrupt as landed:  # delivered just as the block ended
                late = landed
        cause = late if late is not None else exc
        if self._fired:
            error = NodeTimeoutError(self._node, self._seconds)
            if cause is None:
                raise error
            raise error from cause
        if late is not None:  # an enclosing deadline's interrupt: let it reach its own exit
            raise late
        return False

    @abstractmethod
    def _arm(self) -> None:
        """Start the clock for ``self._expires``."""

    @abstractmethod
    def _disarm(self) -> None:
        """Stop the clock and put back whatever was there before; idempotent."""


_INSTALLING, _ARMED, _DONE = "installing", "armed", "done"


class _AlarmDeadline(_Deadline):
    """SIGALRM on the main thread, stacked over whatever handler and itimer were there before.

    The earlier handler and timer are restored on exit, the timer with the time it had left; if
    that earlier timer comes due inside this block it is delivered to its own handler on time.
    """

    __slots__ = ("_alarmed", "_prev_expires", "_prev_handler", "_prev_interval", "_state")

    def __init__(self, seconds: float, node: str) -> None:
        super().__init__(seconds, node)
        self._state = _DONE
        self._prev_handler: Any = signal.SIG_DFL
        self._prev_expires: float | None = None
        self._prev_interval = 0.0
        self._alarmed = False

    def _arm(self) -> None:
        prev = signal.getsignal(signal.SIGALRM)
        self._prev_handler = prev
        self._alarmed = False
        self._state = _INSTALLING
        pending, _ = signal.getitimer(signal.ITIMER_REAL)
        try:
            signal.signal(signal.SIGALRM, self._on_alarm)
            now = monotonic()
            first = min(self._expires - now, pending if pending > 0 else math.inf)
            old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, _clamped(first))
        except BaseException:
            self._state = _DONE
            signal.signal(signal.SIGALRM, prev)
            raise
        # An alarm taken while installing is ours unless the earlier timer, pending before, was
        # gone when ours replaced it: then it fired into our handler and is delivered now.
        if old_delay > 0:
            self._prev_expires = now + old_delay
        else:
            self._prev_expires = now if pending > 0 and self._alarmed else None
        self._prev_interval = old_interval
        self._state = _ARMED
        if self._alarmed:  # taken before the handler could act: have it again, now armed
            signal.setitimer(signal.ITIMER_REAL, _MIN_DELAY)

    def _disarm(self, *, prev_fired: bool = False) -> None:
        if self._state is not _ARMED:
            return
        self._state = _DONE
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
        finally:
            try:
                _set_alarm_handler(self._prev_handler)
            finally:
                self._rearm_previous(prev_fired)

    def _rearm_previous(self, prev_fired: bool) -> None:
        expires = self._prev_expires
        if expires is not None and prev_fired:
            expires = expires + self._prev_interval if self._prev_interval > 0 else None
        if expires is not None:
            delay = _clamped(expires - monotonic())
            signal.setitimer(signal.ITIMER_REAL, delay, self._prev_interval)

    def _on_alarm(self, signum: int, frame: FrameType | None) -> None:
        if self._state is _INSTALLING:
            self._alarmed = True
            return
        if self._state is not _ARMED:
            return
        now = monotonic()
        if now >= self._expires - _TOLERANCE:
            self._fired = True
            if self._outside_block(frame):
                return  # __enter__ or __exit__ raises NodeTimeoutError itself
            self._disarm()
            raise DeadlineInterrupt(f"node {self._node!r}: deadline of {self._seconds:g} s")
        prev_expires = self._prev_expires
        if prev_expires is not None and now >= prev_expires - _TOLERANCE:
            self._deliver_to_previous(signum, frame)
            return
        delay = min(self._expires, prev_expires if prev_expires is not None else math.inf) - now
        signal.setitimer(signal.ITIMER_REAL, _clamped(delay))

    def _outside_block(self, frame: FrameType | None) -> bool:
        """Whether the signal interrupted this deadline's own entry or exit, not the block."""
        return frame is not None and frame.f_code in _OWN_CODES and frame.f_locals.get("self") is self

    def _deliver_to_previous(self, signum: int, frame: FrameType | None) -> None:
        """Step aside so the earlier timer reaches its own handler, then re-arm if it returns."""
        prev = self._prev_handler
        self._disarm(prev_fired=True)
        if callable(prev):
            prev(signum, frame)
        elif prev == signal.SIG_DFL:
            signal.raise_signal(signum)  # the default action, exactly as without this deadline
        self._arm()


def _set_alarm_handler(handler: Any) -> None:
    """Install ``handler``; if a pending signal's handler raised before the swap, swap again."""
    try:
        signal.signal(signal.SIGALRM, handler)
    except BaseException:
        signal.signal(signal.SIGALRM, handler)
        raise


_OWN_CODES = frozenset({_Deadline.__enter__.__code__, _AlarmDeadline._arm.__code__,
                        _Deadline.__exit__.__code__, _AlarmDeadline._disarm.__code__})


class _ThreadDeadline(_Deadline):
    """An asynchronous exception sent into a non-main thread when the watchdog finds it due.

    A lock orders the watchdog against exit: once exit has marked the block finished nothing can
    be sent, and an exception sent that has not landed yet is made to land inside exit, which
    catches it (never withdrawn: see ``_disarm``).
    """

    __slots__ = ("_lock", "_thread_id", "active")

    def __init__(self, seconds: float, node: str) -> None:
        super().__init__(seconds, node)
        self._lock = threading.Lock()
        self.active = False
        self._thread_id = 0

    def _arm(self) -> None:
        self._thread_id = threading.get_ident()
        self.active = True
        _open_on_this_thread().append(self)
        _WATCHDOG.schedule(self._expires, self)

    def fire(self) -> None:
        with self._lock:
            if not self.active:
                return
            self._fired = True
            _send_async_exception(self._thread_id, DeadlineInterrupt)

    def _disarm(self) -> None:
        with self._lock:
            if not self.active:
                return
            self.active = False
            _open_on_this_thread().remove(self)
            sent = self._fired
        if sent:  # not withdrawn: PyThreadState_SetAsyncExc(id, NULL) leaves CPython 3.11's
            _land_here()  # eval breaker set for good, and a later signal handler then spins


class _OpenDeadlines(threading.local):
    """Per thread: the deadlines open on it, outermost first (empty on a thread's first use)."""

    def __init__(self) -> None:
        self.open: list[_ThreadDeadline] = []


_THREAD_DEADLINES = _OpenDeadlines()


def _open_on_this_thread() -> list[_ThreadDeadline]:
    """The deadlines currently open on the calling thread, outermost first."""
    return _THREAD_DEADLINES.open


_WATCHDOG = Watchdog("grapharc-deadline-watchdog", MAX_DEADLINE_SECONDS)


def _land_here() -> None:
    """A Python call: entering it, the eval loop raises an asynchronous exception still pending
    on this thread, so a sent interrupt lands inside ``__exit__``'s catch, not after it."""


def _send_async_exception(thread_id: int, exc_type: type[BaseException] | None) -> None:
    """Schedule ``exc_type`` to be raised in the thread (``None`` withdraws a pending one).
    ctypes is imported here, when a deadline fires, not with the runtime every run imports."""
    import ctypes

    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exc_type) if exc_type is not None else None
    )


class _AsyncDeadline:
    """``asyncio.timeout`` with the expiry reported as NodeTimeoutError naming the node."""

    __slots__ = ("_node", "_seconds", "_timeout")

    def __init__(self, seconds: float, node: str) -> None:
        self._seconds = seconds
        self._node = node
        self._timeout = asyncio.Timeout(None)

    async def __aenter__(self) -> None:
        if self._seconds <= 0:
            raise NodeTimeoutError(self._node, self._seconds)
        await self._timeout.__aenter__()
        if math.isfinite(self._seconds):
            self._timeout.reschedule(asyncio.get_running_loop().time() + self._seconds)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        timeout = self._timeout
        try:
            await timeout.__aexit__(exc_type, exc, tb)
        except TimeoutError as expired:
            if timeout.expired():
                raise NodeTimeoutError(self._node, self._seconds) from expired
            raise
        if timeout.expired():  # the node swallowed the cancellation; its result still may not pass
            error = NodeTimeoutError(self._node, self._seconds)
            if exc is None:
                raise error
            raise error from exc
        return False
