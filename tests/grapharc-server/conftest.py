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


def _api_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *options: str) -> Iterator[str]:
    from server_process import ServerProcess, grapharc_serve

    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    command = grapharc_serve("--port", "0", "--json", "--sessions", str(tmp_path / "sessions"),
                             "--registry", "api_graphs:register", *options)
    with ServerProcess(command) as server:
        yield server.json_announcement()["url"]


@pytest.fixture
def api_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The URL of a real ``grapharc serve`` on 127.0.0.1 with the threads API over sessions in
    ``tmp_path``; its graphs are api_graphs.py's."""
    yield from _api_server(tmp_path, monkeypatch)


@pytest.fixture
def api_server_with_auth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``api_server`` with inbox_setup.py's auth file (alice's token decides for the credit desk)."""
    from inbox_setup import write_auth_file

    yield from _api_server(tmp_path, monkeypatch, "--auth-file", str(write_auth_file(tmp_path / "auth.toml")))


@pytest.fixture
def api_server_gated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``api_server`` with an auth file whose alice decides the gated waiter's approvals."""
    from api_graphs import GATED_WAITER
    from inbox_setup import write_auth_file

    auth = write_auth_file(tmp_path / "auth.toml", alice_may_decide=f"{GATED_WAITER}/*")
    yield from _api_server(tmp_path, monkeypatch, "--auth-file", str(auth))


@pytest.fixture
def api_server_configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``api_server`` with config_graphs.py's graphs too, and an auth file whose alice decides the
    configured asker's approvals."""
    from config_graphs import CONFIGURED_ASK
    from inbox_setup import write_auth_file

    auth = write_auth_file(tmp_path / "auth.toml", alice_may_decide=f"{CONFIGURED_ASK}/*")
    yield from _api_server(tmp_path, monkeypatch, "--registry", "config_graphs:register_configured",
                           "--auth-file", str(auth))


@pytest.fixture
def api_server_with_ceiling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``api_server`` whose operator caps every run at 5 node runs and 30 seconds."""
    yield from _api_server(tmp_path, monkeypatch, "--max-iterations", "5", "--max-seconds", "30")


@pytest.fixture
def api_server_short_grace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``api_server`` that deletes a stateless run's thread half a second after the run ends."""
    yield from _api_server(tmp_path, monkeypatch, "--stateless-grace", "0.5")


@pytest.fixture
def api_server_one_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``api_server`` with a single thread for sync nodes (``--threads 1``)."""
    yield from _api_server(tmp_path, monkeypatch, "--threads", "1")
