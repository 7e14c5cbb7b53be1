"""Runs this server process started: one turn of a durable session each, driven on the event loop.

A run is the API's name for one turn (a start, or a resume after a decision). The thread's state,
status, approvals and trace are durable in the session stores; the run record (its id, its
status, where its part of the trace begins and ends) lives in this process, so a restarted
server no longer knows the ids of the runs it started (the threads carry on as usual).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from grapharc.errors import GraphARCError
from grapharc.session.records import COMPLETED, FAILED, PAUSED, REJECTED, iso

PENDING, RUNNING, SUCCESS, ERROR, INTERRUPTED = "pending", "running", "success", "error", "interrupted"

_RUN_STATUS = {PAUSED: INTERRUPTED, COMPLETED: SUCCESS, REJECTED: SUCCESS, FAILED: ERROR}


@dataclass
class Run:
    """One run: which thread and graph, where its trace begins (``after_seq``) and ends."""

    thread_id: str
    assistant_id: str
    after_seq: int
    multitask_strategy: str = "reject"
    stream_modes: list[str] = field(default_factory=lambda: ["values"])
    run_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    status: str = PENDING
    error: str | None = None
    end_seq: int | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[Any] | None = None
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def changed(self) -> asyncio.Event:
        """An event set at the run's next progress (a node's writes saved and audited, or its end);
        take it before reading the trace, so progress made after the read is not missed."""
        return self._changed

    def progressed(self, *_: Any) -> None:
        """Wake every stream waiting on this run (fits the session layer's ``on_update``)."""
        self._changed.set()
        self._changed = asyncio.Event()

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "thread_id": self.thread_id, "assistant_id": self.assistant_id,
                "created_at": iso(self.created_at), "updated_at": iso(self.updated_at),
                "status": self.status, "metadata": {"error": self.error} if self.error else {},
                "multitask_strategy": self.multitask_strategy, "kwargs": {}}


class RunBook:
    """The runs this process started, by id, and the one (if any) driving each thread."""

    def __init__(self) -> None:
        self._runs: dict[str, Run] = {}

    def get(self, thread_id: str, run_id: str) -> Run | None:
        run = self._runs.get(run_id)
        return run if run is not None and run.thread_id == thread_id else None

    def of_thread(self, thread_id: str) -> list[Run]:
        """The thread's runs, newest first."""
        return sorted((r for r in self._runs.values() if r.thread_id == thread_id),
                      key=lambda r: r.created_at, reverse=True)

    def active(self, thread_id: str) -> Run | None:
        """The run still driving ``thread_id``, if any."""
        return next((r for r in self.of_thread(thread_id) if not r.done.is_set()), None)

    def start(self, run: Run, turn: Awaitable[Any], status_of: Callable[[], str],
              trace_end: Callable[[], int]) -> None:
        """Drive ``turn`` as ``run``; when it ends, record its status (from the thread's durable
        status, via ``status_of``) and where its part of the trace ends."""
        self._runs[run.run_id] = run

        async def drive() -> None:
            run.status = RUNNING
            try:
                await turn
                run.status = _RUN_STATUS.get(await asyncio.to_thread(status_of), SUCCESS)
            except asyncio.CancelledError:
                run.status = INTERRUPTED
                run.error = "cancelled"
            except GraphARCError as exc:
                run.status, run.error = ERROR, str(exc)
            except Exception as exc:  # a node's own failure: the session records it as failed
                run.status, run.error = ERROR, f"{type(exc).__name__}: {exc}"
            finally:
                run.end_seq = await asyncio.shield(asyncio.to_thread(trace_end))
                run.updated_at = time.time()
                run.done.set()
                run.progressed()

        run.task = asyncio.get_running_loop().create_task(drive())
