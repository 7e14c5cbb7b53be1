"""A fresh PostgreSQL database per test on the server at 127.0.0.1:5432, cut off afterwards (emptied
and renamed for a later test, or dropped: fresh_databases.py).

The server is ``GRAPHARC_TEST_POSTGRES`` (default ``postgresql://postgres@127.0.0.1:5432/postgres``,
trust authentication). Where it cannot be reached the tests skip with the reason, unless
``GRAPHARC_REQUIRE_POSTGRES=1`` (CI), where they fail. The session tests' helpers (graphs,
child processes) are shared from ``tests/grapharc-core/session``, and this folder's own helpers
are importable too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

SESSION_HELPERS = Path(__file__).resolve().parents[1] / "grapharc-core" / "session"
sys.path.insert(0, str(SESSION_HELPERS))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # this folder's helpers (notifications)

from fresh_databases import FreshDatabases  # noqa: E402
from required import unavailable  # noqa: E402
from session_graphs import register_all  # noqa: E402
from session_procs import Child  # noqa: E402

from grapharc.session import SessionManager  # noqa: E402

ADMIN = os.environ.get("GRAPHARC_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")


def _admin() -> psycopg.Connection:
    return psycopg.connect(ADMIN, autocommit=True, connect_timeout=5)


def _reachable() -> str | None:
    """None when the server answers, else why not."""
    try:
        with _admin():
            return None
    except psycopg.Error as exc:
        return f"no PostgreSQL server at {ADMIN}: {str(exc).strip()}"


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """The admin URI, once it is known the server answers."""
    missing = _reachable()
    if missing:
        unavailable("GRAPHARC_REQUIRE_POSTGRES", missing,
                    f"{missing} (set GRAPHARC_TEST_POSTGRES, or install postgresql)")
    return ADMIN


def database_uri(name: str) -> str:
    """The URI of database ``name`` on the test server, as a store URI."""
    return ADMIN.rsplit("/", 1)[0] + "/" + name


@pytest.fixture(scope="session")
def fresh_databases(postgres_server: str) -> Iterator[FreshDatabases]:
    """The databases this process hands its tests; the spares are dropped at the end."""
    databases = FreshDatabases(postgres_server)
    yield databases
    databases.close()


@pytest.fixture(scope="module")
def module_postgres_uri(fresh_databases: FreshDatabases) -> Iterator[str]:
    """A fresh database shared by one module's tests (each using only what it made there)."""
    name = fresh_databases.take()
    yield database_uri(name)
    fresh_databases.give_back(name)


@pytest.fixture
def new_database(fresh_databases: FreshDatabases) -> Iterator[Callable[[], str]]:
    """Fresh databases (``grapharc_test_<random>``) on demand, each this test's own; all cut off
    from it after it."""
    taken: list[str] = []

    def make() -> str:
        taken.append(fresh_databases.take())
        return database_uri(taken[-1])

    yield make
    for name in taken:
        fresh_databases.give_back(name)


@pytest.fixture
def postgres_uri(new_database: Callable[[], str]) -> str:
    """A fresh database for this test."""
    return new_database()


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


@pytest.fixture
def marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder where node visits are counted, for this process and its children."""
    folder = tmp_path / "marks"
    folder.mkdir()
    monkeypatch.setenv("GRAPHARC_TEST_MARKS", str(folder))
    return folder


@pytest.fixture
def manager(postgres_uri: str) -> Iterator[SessionManager]:
    """A session manager on this test's database with the session tests' graphs registered."""
    made = SessionManager(postgres_uri, lease_seconds=5.0)
    register_all(made)
    yield made
    made.close()
