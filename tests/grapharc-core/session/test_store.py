"""The SQLite session store: the session-store kit through the store hook, and what only SQLite has
(a directory or a file per location, triggers that keep the audit trail append-only, a schema version)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from session_procs import wait_until

from grapharc.session import LeaseLostError, SessionStoreError, SqliteSessionStore
from grapharc.session.lease import Heartbeat, Lease
from grapharc.stores import known_schemes, open_store
from grapharc.testing.session_store_kit import SessionStoreConformance


class TestSqliteSessionStoreConformance(SessionStoreConformance):
    """The kit against ``sqlite:DIR`` opened through the store hook, including close-and-reopen."""

    durable = True

    def make_store(self, tmp_path: Path) -> SqliteSessionStore:
        return open_store(f"sqlite:{tmp_path}/sessions", kind="sessions")


def test_the_sqlite_scheme_serves_sessions_through_the_store_hook(tmp_path):
    store = open_store(f"sqlite:{tmp_path}/a/sessions.db", kind="sessions")
    assert isinstance(store, SqliteSessionStore) and store.path.is_file()
    assert {"checkpoints", "sessions"} <= set(known_schemes()["sqlite"])


@pytest.mark.parametrize(("location", "file"), [("layer", "layer/sessions.db"), ("one.db", "one.db"),
                                                ("made.db/", "made.db/sessions.db")])
def test_a_directory_holds_sessions_db_and_a_name_with_a_suffix_is_the_file(tmp_path, location, file):
    (tmp_path / "made.db").mkdir()
    store = open_store(f"sqlite:{tmp_path}/{location}", kind="sessions")
    assert store.path == tmp_path / file and store.path.is_file()
    store.close()


def test_the_audit_trail_cannot_be_edited_or_shortened_while_its_session_exists(tmp_path):
    store = open_store(f"sqlite:{tmp_path}/sessions.db", kind="sessions")
    store.create("t", "g", 1.0)
    with sqlite3.connect(store.path) as conn:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("UPDATE audit SET kind = 'forged'")
        with pytest.raises(sqlite3.IntegrityError, match="cannot be deleted"):
            conn.execute("DELETE FROM audit")
    assert [e.kind for e in store.audit("t")] == ["created"]


def test_a_store_path_that_is_a_directory_or_a_newer_schema_is_refused(tmp_path):
    with pytest.raises(SessionStoreError, match="is a directory"):
        SqliteSessionStore(tmp_path)
    path = tmp_path / "sessions.db"
    SqliteSessionStore(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    with pytest.raises(SessionStoreError, match="has schema 99"):
        SqliteSessionStore(path)


def test_a_heartbeat_that_finds_its_lease_gone_stops_the_turn(tmp_path):
    renewals: list[Lease] = []

    def renew(lease: Lease) -> bool:
        renewals.append(lease)
        return len(renewals) < 2

    with Heartbeat(Lease("t", "me", "token", ttl=0.03), renew) as beat:
        wait_until(lambda: beat.lost)
        with pytest.raises(LeaseLostError, match="runner me lost its lease on thread t"):
            beat.check()
