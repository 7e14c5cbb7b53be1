"""A server run as its own process by a test, shared by grapharc-server's tests (``grapharc serve``)
and grapharc-mcp's (``grapharc mcp serve --http``): its stdout and stderr read line by line as they
arrive, the JSON document ``--json`` announces it with, signals, and its exit status."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
from collections.abc import Callable
from types import TracebackType
from typing import IO, Any, Self

PATIENCE_SECONDS = 60
"""A bound on waiting for a process that stopped answering; no test measures time with it."""


def read_announcement(next_line: Callable[[], str]) -> dict[str, Any]:
    """The JSON document ``--json`` prints once the server listens, read line by line (it is
    indented over several) from ``next_line``."""
    text = ""
    while True:
        text += next_line()
        try:
            document: dict[str, Any] = json.loads(text)
        except json.JSONDecodeError:
            continue
        return document


class ServerProcess:
    """A running server: its announcement, its stderr lines, signals, and its exit status."""

    def __init__(self, command: list[str], *, own_group: bool = False,
                 env: dict[str, str] | None = None) -> None:
        """Start ``command`` (in ``env``, by default this process's without debug tracebacks); with
        ``own_group``, in a process group of its own (as a shell starts a job), so a signal sent to
        its group reaches no test process."""
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, start_new_session=own_group,
                                        env=env if env is not None else {**os.environ, "GRAPHARC_DEBUG": ""})
        self._stdout = LineReader(self.process.stdout)
        self._stderr = LineReader(self.process.stderr)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.wait()

    def json_announcement(self) -> dict[str, Any]:
        """The one JSON document ``--json`` prints on stdout once the server listens."""
        return read_announcement(self._stdout.next_line)

    def stderr_line_containing(self, fragment: str) -> str:
        """The next stderr line that contains ``fragment`` (waiting for it to be written)."""
        while fragment not in (line := self._stderr.next_line()):
            pass
        return line

    def send(self, sig: signal.Signals) -> None:
        self.process.send_signal(sig)

    def wait(self) -> int:
        """The exit status, once the process has ended and its output has been read to the end."""
        status = self.process.wait(timeout=PATIENCE_SECONDS)
        self._stdout.join()
        self._stderr.join()
        return status

    @property
    def stdout(self) -> str:
        return self._stdout.text

    @property
    def stderr(self) -> str:
        return self._stderr.text


class LineReader:
    """Reads a pipe on a thread so the test can wait for a line without blocking on the other pipe."""

    def __init__(self, pipe: IO[str] | None) -> None:
        assert pipe is not None
        self._lines: queue.Queue[str] = queue.Queue()
        self._seen: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe: IO[str]) -> None:
        for line in pipe:
            self._seen.append(line)
            self._lines.put(line)
        self._lines.put("")

    def next_line(self) -> str:
        line = self._lines.get(timeout=PATIENCE_SECONDS)
        if not line:
            self._lines.put(line)  # keep the end marker for whoever asks next
            raise EOFError(f"the server closed this stream before writing the expected line; it wrote: "
                           f"{self.text!r}")
        return line

    def join(self) -> None:
        self._thread.join(timeout=PATIENCE_SECONDS)

    @property
    def text(self) -> str:
        return "".join(self._seen)
