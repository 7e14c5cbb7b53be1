"""What only the PostgreSQL session store has: a claim skips a row another runner is claiming
instead of waiting for it, triggers keep the audit trail append-only, footprints name tables,
and a URI's password never reaches a message."""

from __future__ import annotations

import psycopg
import pytest

from grapharc.session import SessionBusyError, UnknownSessionError
from grapharc.stores import open_store
from grapharc.stores.masking import masked


@pytest.fixture
def store(postgres_uri):
    opened = open_store(postgres_uri, kind="sessions")
    yield opened
    opened.close()


def test_a_claim_on_a_row_another_runner_has_locked_is_refused_at_once_not_queued(postgres_uri, store):
    store.create("t1", "g", 1.0)
    with psycopg.connect(postgres_uri) as other, other.transaction():
        other.execute("SELECT 1 FROM grapharc_sessions WHERE thread_id = 't1' FOR UPDATE")
        with pytest.raises(SessionBusyError, match="thread t1 is being claimed by another runner right now"):
            store.claim_start("t1", runner="r", ttl=10.0, now=2.0, input={}, inbox=None)
        with pytest.raises(SessionBusyError, match="being claimed by another runner"):
            store.claim_recovery("t1", runner="r", ttl=10.0, now=2.0)
        with pytest.raises(UnknownSessionError):
            store.claim_start("nobody", runner="r", ttl=10.0, now=2.0, input={}, inbox=None)
    lease = store.claim_start("t1", runner="r", ttl=10.0, now=3.0, input={}, inbox=None)
    assert store.holds(lease) and store.get("t1").runner == "r"


def test_the_audit_trail_cannot_be_edited_or_shortened_while_its_session_exists(postgres_uri, store):
    store.create("t1", "g", 1.0)
    with psycopg.connect(postgres_uri, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.RaiseException, match="the audit trail is append-only"):
            conn.execute("UPDATE grapharc_audit SET kind = 'forged'")
        with pytest.raises(psycopg.errors.RaiseException, match="audit trail of a live session"):
            conn.execute("DELETE FROM grapharc_audit WHERE thread_id = 't1'")
    assert [e.kind for e in store.audit("t1")] == ["created"]


def test_footprints_name_the_database_and_each_table(postgres_uri, store):
    database = postgres_uri.rsplit("/", 1)[1]
    assert set(store.footprint()) == {f"{database}/grapharc_{t}" for t in ("sessions", "approvals", "events",
                                                                           "audit", "trace_events")}
    checkpoints = open_store(postgres_uri, kind="checkpoints")
    try:
        assert f"{database}/checkpoints" in checkpoints.footprint()
    finally:
        checkpoints.close()


def test_a_password_in_the_uri_is_replaced_in_messages():
    assert masked("postgresql://app:s3cret@db:5432/x") == "postgresql://app:***@db:5432/x"
    assert masked("postgresql://app@db/x") == "postgresql://app@db/x"
