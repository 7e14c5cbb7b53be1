"""``grapharc mcp serve`` run as its own process: its command line, the environment that lets it
import the test graphs, and an HTTP server process (tests/serving_process.py, shared with
grapharc-server's tests) whose ``--json`` announcement names its URL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from serving_process import PATIENCE_SECONDS, ServerProcess

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


def http_server(command: list[str]) -> ServerProcess:
    """``grapharc mcp serve --http`` as a running process (tests/serving_process.py), in the test
    environment."""
    return ServerProcess(command, env=environment())
