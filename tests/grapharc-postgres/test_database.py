"""One database per process and URI: the session, run, checkpoint and trace stores opened on one URI
share one pool and one listening connection per event loop, migrate once, close with the last of
them, and a forked child makes connections of its own instead of talking on its parent's.

Connections are counted from this process's side, so a backend still exiting after its client
closed the socket is not counted: the local ports of the TCP sockets this process holds open
(``/proc/self/fd``, ``/proc/self/net/tcp``) that ``pg_stat_activity`` lists as clients of the
test's database.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from notifications import woken_by
from session_graphs import register_all

import grapharc.postgres.database as database_module
from grapharc.postgres.database import POOL_SIZE
from grapharc.session import SessionManager
from grapharc.stores import open_store

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts sockets in /proc")

ADMIN_DATABASE = "postgres"


def _socket_ports() -> set[int]:
    """The local ports of the established TCP connections this process holds open."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the directory's own descriptor, closed by now
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    ports = set()
    for table in (Path("/proc/self/net/tcp"), Path("/proc/self/net/tcp6")):
        for line in table.read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "01" and fields[9] in inodes:  # 01: ESTABLISHED
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _admin(uri: str) -> psycopg.Connection[Any]:
    return psycopg.connect(uri.rsplit("/", 1)[0] + "/" + ADMIN_DATABASE, autocommit=True)


def held(uri: str) -> set[int]:
    """The client ports of this process's connections to the database ``uri`` names."""
    ours = _socket_ports()
    with _admin(uri) as conn:
        clients = {row[0] for row in conn.execute(
            "SELECT client_port FROM pg_stat_activity WHERE datname = %s", (uri.rsplit("/", 1)[1],))}
    return ours & clients


def last_statements(uri: str, ports: set[int]) -> dict[int, Any]:
    """When each backend serving one of ``ports`` last began a statement."""
    with _admin(uri) as conn:
        return {row[0]: row[1] for row in conn.execute(
            "SELECT client_port, query_start FROM pg_stat_activity WHERE client_port = ANY(%s)", ([*ports],))}


@pytest.fixture
def upgrades(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each URI the session tables' migrations run on, in order."""
    calls: list[str] = []
    upgrade = database_module.upgrade

    def counted(conn: Any, uri: str) -> list[int]:
        calls.append(uri)
        return upgrade(conn, uri)

    monkeypatch.setattr(database_module, "upgrade", counted)
    return calls


def test_sessions_runs_checkpoints_and_traces_hold_one_pool_and_one_listener_per_loop(postgres_uri, upgrades):
    manager = SessionManager(postgres_uri, lease_seconds=5.0)
    register_all(manager)
    runs = open_store(postgres_uri, kind="runs")
    traces = open_store(postgres_uri, kind="traces")
    sink = traces.open_sink()
    try:
        assert len(held(postgres_uri)) == POOL_SIZE
        assert manager.start("chain").status == "completed"  # the sync saver uses the same pool
        assert len(held(postgres_uri)) == POOL_SIZE

        async def turn() -> tuple[int, int]:
            thread = (await manager.astart("chain")).thread_id
            assert await woken_by(manager, thread, lambda: manager.post_event(thread, "poke"))  # listening
            with_listener_and_async_saver = len(held(postgres_uri))
            await manager.aclose()  # gives back the async saver's pool of one; the others hold the rest
            return with_listener_and_async_saver, len(held(postgres_uri))

        during, after = asyncio.run(turn())
        assert during == POOL_SIZE + 1 + 1  # the listening connection and the async saver's
        assert after == POOL_SIZE + 1  # the listener lives until its loop or the database closes
    finally:
        sink.close()
        runs.close()
        traces.close()
        manager.close()
    assert held(postgres_uri) == set()
    assert upgrades == [postgres_uri]  # once, by the first store


def test_the_last_store_closed_closes_the_database_and_the_next_opens_and_migrates_it_again(postgres_uri,
                                                                                           upgrades):
    sessions, runs = open_store(postgres_uri, kind="sessions"), open_store(postgres_uri, kind="runs")
    sessions.close()
    sessions.close()  # twice is harmless, and gives back nothing more
    assert len(held(postgres_uri)) == POOL_SIZE
    assert runs.of_thread("nobody") == []  # the run store still has the database
    runs.close()
    assert held(postgres_uri) == set()
    assert len(upgrades) == 1

    again = open_store(postgres_uri, kind="sessions")
    again.close()
    assert len(upgrades) == 2


def test_a_store_dropped_without_closing_gives_its_database_back(postgres_uri):
    traces = open_store(postgres_uri, kind="traces")  # trace readers open a store per read, never close it
    assert len(held(postgres_uri)) == POOL_SIZE
    del traces
    assert held(postgres_uri) == set()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_opens_its_own_connections_and_leaves_its_parents_alone(postgres_uri):
    manager = SessionManager(postgres_uri, lease_seconds=5.0)
    register_all(manager)
    try:
        manager.start("chain")
        parents = held(postgres_uri)
        before = last_statements(postgres_uri, parents)
        report = _in_child(_child_turn, manager, postgres_uri, parents)
        assert report["status"] == "completed", report
        assert report["new"] == POOL_SIZE  # one pool of its own for the inherited manager and a new store
        assert report["kept"] == sorted(parents)  # the parent's sockets untouched in the child
        assert held(postgres_uri) == parents  # ... and in the parent, which reconnected nothing
        assert last_statements(postgres_uri, parents) == before  # no statement of the child's ran on them
        assert manager.get(report["thread"]).status == "completed"
        assert manager.start("chain").status == "completed"  # the parent's connections still work
    finally:
        manager.close()


def _child_turn(manager: SessionManager, uri: str, parents: set[int]) -> dict[str, Any]:
    """In the child: a turn through the inherited manager and a run-store read, then everything closed."""
    session = manager.start("chain")
    runs = open_store(uri, kind="runs")
    runs.of_thread("nobody")
    mine = held(uri)
    runs.close()
    manager.close()
    return {"status": session.status, "thread": session.thread_id, "new": len(mine - parents),
            "kept": sorted(mine & parents)}


def _in_child(work: Any, *args: Any) -> dict[str, Any]:
    """``work(*args)`` in a forked child; what it returned (or the error it raised), as JSON."""
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        os.close(reading)
        try:
            result = work(*args)
        except BaseException as exc:  # report it to the parent, whatever it is
            result = {"error": repr(exc)}
        os.write(writing, json.dumps(result).encode())
        os._exit(0)
    os.close(writing)
    with os.fdopen(reading, "rb") as pipe:
        document = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(document)  # type: ignore[no-any-return]
