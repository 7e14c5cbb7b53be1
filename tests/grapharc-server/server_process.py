"""Helpers for tests that run ``grapharc serve`` as its own process: the command lines, the process
(tests/serving_process.py, shared with grapharc-mcp's tests), and whether this machine has IPv6."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import serving_process
from serving_process import PATIENCE_SECONDS, read_announcement

__all__ = ["PATIENCE_SECONDS", "ServerProcess", "api_server_url", "gated_serve", "grapharc_serve",
           "needs_ipv6", "read_announcement", "serving", "sse_events"]

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


class ServerProcess(serving_process.ServerProcess):
    """A running server (see tests/serving_process.py), and the gated test app's held request."""

    def release_gated_request(self) -> None:
        """Let the gated app's request in flight finish."""
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()


def sse_events(text: str) -> list[dict[str, str]]:
    """The events of an SSE body, each as its fields (comments and heartbeats dropped)."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":"))
        if "event" in fields:
            events.append(fields)
    return events
