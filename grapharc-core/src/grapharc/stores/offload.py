"""Blocking store calls off the event loop, in a pool of threads of their own.

``asyncio.to_thread`` shares the loop's default executor with LangGraph's sync nodes. A server
whose threads are all busy in sleeping or slow nodes then queued its own bookkeeping behind
them: a lease's heartbeat waited past the lease's expiry (losing a live thread to a takeover),
and a stream's trace read waited for a node to finish before it could deliver what the node
had already recorded. Session, run and trace store calls go through ``to_thread`` here
instead: a small pool only they use, so they wait for each other at most, never for a graph.
The pool is ``CallThreads`` (one queue of calls, each result handed straight back to the loop),
about half the CPU per call of ``run_in_executor`` with a ``ThreadPoolExecutor``.

A store whose reads are of a local file that never wait for a writer (SQLite in WAL mode) says so
with ``READS_ON_LOOP``: there a short read costs the event loop less run in place than the trip
(some 80 µs of CPU on an idle 2-core machine, 170 under a server's load), and a caller that reads
often (a stream, on every wake of its run) may read on the loop when ``reads_on_loop`` says every
store it reads allows it. A store whose writes refuse at once where they would wait says so with
``WRITES_ON_LOOP`` too: ``nearby`` runs a call over such stores on the loop, all of it or none
(``grapharc.stores.in_place``), and sends it to the pool only where it would wait.
"""

from __future__ import annotations

import contextvars
import functools
import os
import threading
from collections.abc import Callable, Sequence
from typing import ParamSpec, TypeVar

from grapharc.stores import in_place
from grapharc.stores.call_threads import CallThreads

STORE_THREADS = 4
"""Threads for store calls. Each call is short and the stores serialise writes anyway, while every
thread more is one more taker of the GIL from the event loop: with 190 streams open at 47 runs/s
on two cores, p99 delivery latency was 35 to 39 ms with 4 threads against 81 to 104 with 8 or 16."""

_P = ParamSpec("_P")
_R = TypeVar("_R")

_pool: CallThreads | None = None
_pool_lock = threading.Lock()


def _store_pool() -> CallThreads:
    """The process's store pool, made on first use (so a process that forks workers before
    using it hands them none of its threads); the lock is taken only while there is none yet."""
    global _pool
    pool = _pool
    if pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = CallThreads("grapharc-store", STORE_THREADS)
            pool = _pool
    return pool


def _forget_pool_in_child() -> None:
    """A forked child has none of its parent's threads: it makes a pool of its own on first use."""
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):  # not on Windows, which cannot fork
    os.register_at_fork(after_in_child=_forget_pool_in_child)


def reads_on_loop(*stores: object) -> bool:
    """Whether every one of ``stores`` declares ``READS_ON_LOOP`` (see the module)."""
    return all(getattr(store, "READS_ON_LOOP", False) for store in stores)


def writes_on_loop(*stores: object) -> bool:
    """Whether every one of ``stores`` declares ``WRITES_ON_LOOP`` (see the module)."""
    return all(getattr(store, "WRITES_ON_LOOP", False) for store in stores)


async def nearby(stores: Sequence[object], func: Callable[_P, _R], /, *args: _P.args,
                 **kwargs: _P.kwargs) -> _R:
    """The store call ``func(*args, **kwargs)`` over ``stores``: on the event loop where every one of
    them allows it and nothing in it would wait (``in_place.run``), else in the store pool."""
    if writes_on_loop(*stores):
        ran, result = in_place.run(func, *args, **kwargs)
        if ran:
            return result  # type: ignore[return-value]  # func's own result, None included
    return await to_thread(func, *args, **kwargs)


async def to_thread(func: Callable[_P, _R], /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
    """Run the blocking store call ``func(*args, **kwargs)`` in the store pool, in the caller's
    context (as ``asyncio.to_thread`` does in the default executor); its result."""
    call = functools.partial(contextvars.copy_context().run, func, *args, **kwargs)
    return await _store_pool().run(call)
