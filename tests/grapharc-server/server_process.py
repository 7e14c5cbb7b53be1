"""Helpers for tests that run a server as its own process: the command lines, the process (its
stdout and stderr read line by line as they arrive), and whether this machine has IPv6."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import pytest

# Bounds on waiting for a process that has stopped answering; no test measures time with them.
PATIENCE_SECONDS = 60

GATED_SERVER = Path(__file__).with_name("gated_server.py")


def has_ipv6_loopback() -> bool:
    """Whether this machine can listen on ::1 (containers often run without IPv6)."""
    try:
        socket.create_server(("::1", 0), family=socket.AF_INET6).close()
    except OSError:
        return False
    return True


needs_ipv6 = pytest.mark.skipif(not has_ipv6_loopback(), reason="this machine cannot listen on ::1")


def grapharc_serve(*options: str) -> list[str]:
    """The command line of ``grapharc serve`` run by this interpreter."""
    return [sys.executable, "-m", "grapharc.cli", "serve", *options]


def gated_serve(app: str, *options: str) -> list[str]:
    """The command line of ``grapharc serve`` with a test app (see gated_server.py)."""
    return [sys.executable, str(GATED_SERVER), app, *options]


@contextmanager
def serving(sessions: Path, *options: str) -> Iterator[ServerProcess]:
    """A ``grapharc serve`` on a free port over ``sessions`` with ``options`` (registries, an auth
    file), the test graphs beside this file importable by it: the running process, whose
    ``json_announcement()`` names its URL. For a module's one server (a module-scoped fixture)."""
    beside = str(Path(__file__).parent)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [beside, os.environ.get("PYTHONPATH")])))
        with ServerProcess(grapharc_serve("--port", "0", "--json", "--sessions", str(sessions),
                                          *options)) as server:
            yield server



def api_server_url(folder: str) -> Any:
    """A module-scoped fixture: the URL of the module's one ``grapharc serve`` of api_graphs.py's
    graphs, over a fresh sessions folder named after ``folder``
    (``server = api_server_url("history")`` in the test module)."""

    @pytest.fixture(scope="module")
    def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
        sessions = tmp_path_factory.mktemp(folder) / "sessions"
        with serving(sessions, "--registry", "api_graphs:register") as served:
            yield str(served.json_announcement()["url"])

    return url


def read_announcement(next_line: Callable[[], str]) -> dict[str, Any]:
    """The JSON document ``--json`` prints once the server listens, read line by line (it is
    indented over several) from ``next_line``."""
    text = ""
    while True:
        text += next_line()
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            continue


class ServerProcess:
    """A running server: its announcement, its stderr lines, signals, and its exit status."""

    def __init__(self, command: list[str], *, own_group: bool = False) -> None:
        """Start ``command``; with ``own_group``, in a process group of its own (as a shell starts a
        job), so a signal sent to its group reaches no test process."""
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, start_new_session=own_group,
                                        env={**os.environ, "GRAPHARC_DEBUG": ""})
        self._stdout = _LineReader(self.process.stdout)
        self._stderr = _LineReader(self.process.stderr)

    def __enter__(self) -> ServerProcess:
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

    def release_gated_request(self) -> None:
        """Let the gated app's request in flight finish."""
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()

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


class _LineReader:
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
            raise EOFError("the server closed this stream before writing the expected line")
        return line

    def join(self) -> None:
        self._thread.join(timeout=PATIENCE_SECONDS)

    @property
    def text(self) -> str:
        return "".join(self._seen)


def sse_events(text: str) -> list[dict[str, str]]:
    """The events of an SSE body, each as its fields (comments and heartbeats dropped)."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":"))
        if "event" in fields:
            events.append(fields)
    return events
