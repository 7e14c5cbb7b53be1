"""``grapharc serve --workers N``: N server processes on one listening socket, and their supervisor.

One process runs Python on one core at a time (the GIL), so one server process cannot use a
second core however many requests wait. The supervisor, the process the operator started, binds
the socket and forks N workers. Each opens the sessions and the run store itself, serves the API
on the shared socket (the kernel hands each connection to one of them) and runs its own run
worker over the shared durable queue; a run is driven by whichever worker claims it, normally the
one whose request queued it, as that request wakes its own worker at once.

The supervisor announces the address once every worker accepts requests, and holds nothing else
open: no store, no thread, no event loop, so a worker it forks later (to replace one that died)
starts as clean as the first. On SIGTERM or SIGINT it passes SIGTERM on to each worker, which
drains as a single server does (``lifecycle``); it exits 0 once all drained, 1 if any did not.
Workers run in a process group of their own, so Ctrl+C in a terminal reaches the supervisor
alone, and each watches a pipe the supervisor holds open: if the supervisor dies, they drain and
stop rather than serve unsupervised. A worker that dies is replaced, unless it died within
``STEADY_SECONDS`` of its start (a crash at start-up repeats): then the server stops, exit 1.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import NoReturn

from grapharc.errors import GraphARCError
from grapharc.server.errors import ServerStartupError
from grapharc.server.listener import Engine
from grapharc.server.notices import notice

STEADY_SECONDS = 10.0
"""A worker that dies sooner after its start is not replaced: the server stops instead."""
KILL_GRACE_SECONDS = 5.0
"""How long past the drain timeout the supervisor waits for a worker before it kills it."""
STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}
"""The signals that stop the server: the supervisor's to pass on to its workers."""


@dataclass(frozen=True)
class WorkerSlot:
    """Where a worker stands among its siblings: its index of ``count``, the supervisor's lifeline
    (a pipe's read end: at its end, the supervisor is gone) and the directory of the siblings'
    wake-up sockets (``grapharc.server.siblings``)."""

    index: int
    count: int
    lifeline: int
    wake_dir: Path


ServeOne = Callable[[Callable[[Engine], None], WorkerSlot], None]
"""What a worker runs: serve until stopped, calling its first argument once requests are accepted."""


class WorkerStartupError(ServerStartupError):
    """A worker process failed to start serving, so the server stopped."""


@dataclass
class _Worker:
    pid: int
    index: int
    started: float


@dataclass
class Supervisor:
    """Forks, watches and stops the workers of one server (see the module docstring)."""

    count: int
    serve_one: ServeOne
    drain_timeout: float
    workers: dict[int, _Worker] = field(default_factory=dict)
    statuses: list[int] = field(default_factory=list)
    stopping: bool = False
    _lifeline: tuple[int, int] = (-1, -1)
    _wake_dir: Path = Path()

    def start(self) -> Engine:
        """Fork the workers and wait until each accepts requests; what serves them. Raises
        WorkerStartupError (every worker stopped) if one fails to start."""
        self._lifeline = os.pipe()
        self._wake_dir = Path(tempfile.mkdtemp(prefix="grapharc-workers-"))
        for sig in STOP_SIGNALS:  # before the first fork: a stop from now on is the supervisor's
            signal.signal(sig, self._on_signal)
        engine: Engine | None = None
        try:
            for index in range(self.count):
                if self.stopping:  # a stop came while starting: no more workers for it to miss
                    break
                _pid, engine = self._start(index)
            if engine is None:
                raise WorkerStartupError("the server was stopped before its first worker started")
        except BaseException:
            self._stop_all(signal.SIGKILL)
            for pid in list(self.workers):
                os.waitpid(pid, 0)
                del self.workers[pid]
            self._closed()
            raise
        return engine

    def pids(self) -> list[int]:
        """The workers' process ids."""
        return sorted(self.workers)

    def run(self) -> int:
        """Supervise until a signal stops the server; 0 if every worker drained, else 1."""
        while self.workers:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            worker = self.workers.pop(pid, None)
            if worker is None:
                continue
            code = os.waitstatus_to_exitcode(status)
            if self.stopping:
                self.statuses.append(code)
            else:
                self._replace(worker, code)
        self._closed()
        signal.setitimer(signal.ITIMER_REAL, 0)  # the kill timer, if a stop set it
        return 0 if all(code == 0 for code in self.statuses) else 1

    def _closed(self) -> None:
        """Let go of the lifeline and the wake-up sockets' directory (no worker is left)."""
        os.close(self._lifeline[0])
        os.close(self._lifeline[1])
        shutil.rmtree(self._wake_dir, ignore_errors=True)

    def _replace(self, worker: _Worker, code: int) -> None:
        """A worker died while serving: start another, or stop the server if it died young."""
        lived = time.monotonic() - worker.started
        _notice(f"worker {worker.pid} exited ({_status(code)}) after {lived:.1f}s")
        if lived < STEADY_SECONDS:
            _notice(f"a worker that dies within {STEADY_SECONDS:g}s of its start would die again: stopping")
            self.statuses.append(1)
            self._begin_stop()
            return
        try:
            replacement, _engine = self._start(worker.index)
            _notice(f"worker {replacement} started in its place")
        except GraphARCError as exc:
            _notice(f"its replacement failed to start: {exc}; stopping")
            self.statuses.append(1)
            self._begin_stop()

    def _on_signal(self, sig: int, frame: FrameType | None) -> None:
        if self.stopping:
            _notice(f"{signal.Signals(sig).name} again: passed on to the workers, which stop now")
        self._begin_stop()

    def _begin_stop(self) -> None:
        """Ask every worker to drain (a second ask stops them at once, as for a single server), and
        kill any still running ``KILL_GRACE_SECONDS`` past the drain timeout."""
        if not self.stopping:
            signal.signal(signal.SIGALRM, lambda *_: self._stop_all(signal.SIGKILL))
            signal.setitimer(signal.ITIMER_REAL, self.drain_timeout + KILL_GRACE_SECONDS)
        self.stopping = True
        self._stop_all(signal.SIGTERM)

    def _stop_all(self, sig: int) -> None:
        for pid in self.workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def _start(self, index: int) -> tuple[int, Engine]:
        """Fork worker ``index`` and wait for its start-up report: its pid and what serves its
        requests (WorkerStartupError: why it failed)."""
        ready_read, ready_write = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)  # no child runs the supervisor's handler
        try:
            pid = os.fork()
            if pid == 0:
                os.close(ready_read)
                os.close(self._lifeline[1])
                _worker_main(self.serve_one, ready_write,
                             WorkerSlot(index, self.count, self._lifeline[0], self._wake_dir))
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        os.close(ready_write)
        self.workers[pid] = _Worker(pid, index, time.monotonic())
        with os.fdopen(ready_read, "rb") as reports:
            line = reports.readline()
        report = json.loads(line) if line else {"message": "it exited before serving"}
        if "message" in report:
            raise WorkerStartupError(f"server worker {pid} failed to start: {report['message']}",
                                     hint=report.get("hint") or "the lines above say why")
        return pid, Engine(event_loop=report["event_loop"], http=report["http"])


def _worker_main(serve_one: ServeOne, ready: int, slot: WorkerSlot) -> NoReturn:
    """A forked worker: serve, report how the start went on ``ready``, and end the process."""
    os.setpgid(0, 0)  # Ctrl+C in the terminal is the supervisor's to pass on
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # until the server's own handlers are in place
    for sig in (signal.SIGTERM, signal.SIGALRM):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    reported = False

    def report(document: dict[str, str]) -> None:
        nonlocal reported
        if not reported:
            reported = True
            os.write(ready, (json.dumps(document) + "\n").encode())

    code = 1
    try:
        serve_one(lambda engine: report({"event_loop": engine.event_loop, "http": engine.http}), slot)
        code = 0
    except GraphARCError as exc:
        report({"message": str(exc), "hint": exc.hint})
        _notice(f"worker {os.getpid()}: {exc}")
    except BaseException as exc:  # a bug: its traceback, as this process ends here
        report({"message": f"{type(exc).__name__}: {exc}"})
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # never return into the supervisor's code


def _status(code: int) -> str:
    return f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"


def _notice(message: str) -> None:
    notice(f"supervisor: {message}")
