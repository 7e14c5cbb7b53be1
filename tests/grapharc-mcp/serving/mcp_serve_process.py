"""``grapharc mcp serve`` run as its own process: its command line, the environment that lets it
import the test graphs, and an HTTP server process whose ``--json`` announcement names its URL."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import IO, Any

PATIENCE_SECONDS = 60  # a bound on waiting for a process that stopped answering; nothing is timed with it
BESIDE = str(Path(__file__).parent)
REGISTRY = "mcp_serve_graphs:register"


def serve_command(sessions: Path, *options: str, registry: str = REGISTRY) -> list[str]:
    """The command line of ``grapharc mcp serve`` over ``sessions`` with the test ``registry``."""
    return [sys.executable, "-m", "grapharc.cli", "mcp", "serve", "--sessions", str(sessions),
            "--registry", registry, *options]


def grapharc(*arguments: str) -> list[str]:
    """The command line of ``grapharc`` run by this interpreter."""
    return [sys.executable, "-m", "grapharc.cli", *arguments]


def environment() -> dict[str, str]:
    """This process's environment, with the test graphs importable and no debug tracebacks."""
    path = os.pathsep.join(filter(None, [BESIDE, os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "GRAPHARC_DEBUG": ""}


def run(command: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``command`` to its end in the test environment (in ``cwd``), its stdin empty."""
    return subprocess.run(command, capture_output=True, text=True, env=environment(), check=False,
                          timeout=PATIENCE_SECONDS, cwd=cwd, stdin=subprocess.DEVNULL)


class HttpServer:
    """``grapharc mcp serve --http`` as a running process: its announcement, stderr, exit status."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env=environment())
        self._stdout = _Lines(self.process.stdout)
        self._stderr = _Lines(self.process.stderr)

    def __enter__(self) -> HttpServer:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.wait()

    def announcement(self) -> dict[str, Any]:
        """The JSON document ``--json`` prints on stdout once requests are accepted (indented over
        several lines)."""
        text = ""
        while True:
            text += self._stdout.next_line()
            try:
                document: dict[str, Any] = json.loads(text)
            except json.JSONDecodeError:
                continue
            return document

    def stderr_line_containing(self, fragment: str) -> str:
        """The next stderr line that contains ``fragment`` (waiting for it to be written)."""
        while fragment not in (line := self._stderr.next_line()):
            pass
        return line

    def wait(self) -> int:
        """The exit status, once the process has ended and its output is read to the end."""
        status = self.process.wait(timeout=PATIENCE_SECONDS)
        self._stdout.join()
        self._stderr.join()
        return status

    @property
    def stderr(self) -> str:
        return self._stderr.text


class _Lines:
    """A pipe read on a thread, so the test waits for a line without blocking on the other pipe."""

    def __init__(self, pipe: IO[str] | None) -> None:
        assert pipe is not None
        self._queue: queue.Queue[str] = queue.Queue()
        self._seen: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe: IO[str]) -> None:
        for line in pipe:
            self._seen.append(line)
            self._queue.put(line)
        self._queue.put("")

    def next_line(self) -> str:
        line = self._queue.get(timeout=PATIENCE_SECONDS)
        if not line:
            self._queue.put(line)
            raise EOFError(f"the server closed its output first; it wrote: {self.text!r}")
        return line

    def join(self) -> None:
        self._thread.join(timeout=PATIENCE_SECONDS)

    @property
    def text(self) -> str:
        return "".join(self._seen)
