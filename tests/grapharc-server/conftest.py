"""Fixtures for the server's tests: the helper module beside this file, and a port already taken."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # server_process: the helper module beside this file


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port on 127.0.0.1 that another socket is listening on for the length of the test."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        yield taken.getsockname()[1]
