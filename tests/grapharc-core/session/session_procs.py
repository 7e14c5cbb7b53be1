"""Separate processes for the session tests: session operations and real CLI commands."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).parent


class Child:
    """A process started by a test, killed with SIGKILL if the test leaves it running."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env={**os.environ, **(env or {})})

    def finish(self) -> tuple[int, str, str]:
        out, err = self.process.communicate(timeout=120)
        return self.process.returncode, out, err

    def result(self) -> tuple[int, dict]:
        """Exit status and the JSON document on the last line of stdout."""
        code, out, err = self.finish()
        assert out.strip(), err
        return code, json.loads(out.strip().splitlines()[-1])

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)


def session_op(directory: Path, *args: str, env: dict[str, str] | None = None) -> Child:
    """``session_child.py DIR ARGS`` in a new process."""
    return Child([sys.executable, str(HERE / "session_child.py"), str(directory), *args], env)


def cli(*args: str, env: dict[str, str] | None = None) -> Child:
    """The real ``session`` / ``demo approval`` commands in a new process (``session_cli.py``)."""
    return Child([sys.executable, str(HERE / "session_cli.py"), *args], env)


def wait_for(ready: Path, child: Child) -> None:
    """Wait until the child has written ``ready`` (it is then parked at a known point)."""
    while not ready.exists():
        if child.process.poll() is not None:
            raise AssertionError(f"child exited early: {child.process.communicate()}")
        time.sleep(0.01)


def wait_until(check: Callable[[], bool]) -> None:
    """Poll ``check`` until it holds (bounded by pytest's timeout); no timing is asserted."""
    while not check():
        time.sleep(0.02)
