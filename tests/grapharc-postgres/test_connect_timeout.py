"""A PostgreSQL host that accepts a connection and never answers is an error after the connect
timeout (10 s unless the URI names its own ``connect_timeout``), not a wait without end."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from grapharc.postgres import connect as connect_module
from grapharc.postgres.connect import connect_timeout
from grapharc.postgres.errors import PostgresStoreError
from grapharc.stores import open_store


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A TCP port on 127.0.0.1 that accepts connections and never says a word."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1]
    server.close()
    for conn in held:
        conn.close()


def test_a_uri_without_a_timeout_gets_the_default_and_one_with_its_own_keeps_it():
    assert connect_timeout("postgresql://u@h/db") == {"connect_timeout": 10}
    assert connect_timeout("postgresql://u@h/db?sslmode=disable") == {"connect_timeout": 10}
    assert connect_timeout("postgresql://u@h/db?connect_timeout=3") == {}


@pytest.mark.timeout(60)
def test_a_host_that_never_answers_is_a_clear_error_after_the_default_timeout(silent_port, monkeypatch):
    monkeypatch.setattr(connect_module, "CONNECT_TIMEOUT_SECONDS", 1)
    with pytest.raises(PostgresStoreError, match=r"cannot open the PostgreSQL store .*127\.0\.0\.1"):
        open_store(f"postgresql://grapharc@127.0.0.1:{silent_port}/nowhere", kind="sessions")


@pytest.mark.timeout(60)
def test_a_uri_naming_its_own_timeout_is_held_to_it(silent_port):
    with pytest.raises(PostgresStoreError, match="timeout"):
        open_store(f"postgresql://grapharc@127.0.0.1:{silent_port}/nowhere?connect_timeout=1",
                   kind="sessions")
