"""Waking readers when another process writes: LISTEN on the channels the triggers NOTIFY.

Migration 2's triggers notify ``grapharc_audit`` and ``grapharc_trace`` with the thread id on
every insert. A ``ChangeListener`` holds one LISTENing ``AsyncConnection`` for its event loop
and wakes whoever waits on that thread, and whoever waits on any thread. A notification that
arrives before its reader starts waiting is not kept: the wait has a timeout and the reader
re-reads then, so nothing is missed, only later.
"""

from __future__ import annotations

import asyncio
import contextlib

import psycopg

from grapharc.postgres.connect import connect_timeout
from grapharc.postgres.schema import CHANNELS


class ChangeListener:
    """One LISTENing connection on one event loop, and the waiters for each thread's writes."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.loop = asyncio.get_running_loop()
        self._waiters: dict[str | None, set[asyncio.Future[None]]] = {}
        """The waiters on each thread's writes, and (key None) on any thread's."""
        self._listening: asyncio.Future[None] = self.loop.create_future()
        self._task = self.loop.create_task(self._listen(), name="grapharc-postgres-listen")

    async def wait(self, thread_id: str | None, timeout: float) -> bool:
        """True when the thread's audit trail or trace (any thread's: None) is written to within
        ``timeout`` seconds, False when the time passes first (or the server cannot be listened to)."""
        woken = self.loop.create_future()
        self._waiters.setdefault(thread_id, set()).add(woken)
        try:
            async with asyncio.timeout(timeout):
                try:
                    await asyncio.shield(self._listening)
                except psycopg.Error:  # no notifications to be had: let the timeout end the wait
                    await asyncio.sleep(timeout)
                await woken
            return True
        except TimeoutError:
            return False
        finally:
            waiting = self._waiters.get(thread_id, set())
            waiting.discard(woken)
            if not waiting:
                self._waiters.pop(thread_id, None)

    @property
    def alive(self) -> bool:
        """False once the connection failed or was closed (a new listener is then needed)."""
        return not self._task.done()

    async def _listen(self) -> None:
        try:
            async with await psycopg.AsyncConnection.connect(self.uri, autocommit=True,
                                                              **connect_timeout(self.uri)) as conn:
                for channel in CHANNELS:
                    await conn.execute(f"LISTEN {channel}")
                self._listening.set_result(None)
                async for note in conn.notifies():
                    for woken in (*self._waiters.get(note.payload, ()), *self._waiters.get(None, ())):
                        if not woken.done():
                            woken.set_result(None)
        except psycopg.Error as exc:
            if not self._listening.done():
                self._listening.set_exception(exc)

    def close(self) -> None:
        """Stop listening (from any thread); closing twice is harmless."""
        with contextlib.suppress(RuntimeError):  # the loop is already closed: so is the connection's task
            self.loop.call_soon_threadsafe(self._task.cancel)
