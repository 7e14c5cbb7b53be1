"""Shared fixtures for the session tests: a session directory, visit marks, child processes."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from session_graphs import register_all
from session_procs import Child

from grapharc.session import SessionManager


@pytest.fixture
def marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder where node visits are counted, for this process and its children."""
    folder = tmp_path / "marks"
    folder.mkdir()
    monkeypatch.setenv("GRAPHARC_TEST_MARKS", str(folder))
    return folder


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


@pytest.fixture
def manager(directory: Path) -> Iterator[SessionManager]:
    made = SessionManager(directory, lease_seconds=5.0)
    register_all(made)
    yield made
    made.close()


@pytest.fixture
def reap() -> Iterator[Callable[[Child], Child]]:
    """Register a child so it is SIGKILLed if the test ends while it still runs."""
    children: list[Child] = []

    def keep(child: Child) -> Child:
        children.append(child)
        return child

    yield keep
    for child in children:
        if child.process.poll() is None:
            child.kill()
