"""An idle server's looks for due work on PostgreSQL only read: the cron scheduler's
(``next_due``, ``due``) and the webhook sender's (``has_due``) go through while another session
holds its table in EXCLUSIVE mode, which admits reads and blocks every write (UPDATE, INSERT,
DELETE, SELECT ... FOR UPDATE)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from typing import Any

import psycopg

from grapharc.postgres.crons import PostgresCronStore
from grapharc.postgres.runs import PostgresRunStore
from grapharc.postgres.schema import PREFIX
from grapharc.postgres.webhooks import PostgresWebhookStore
from grapharc.testing.cron_store_kit import a_cron

HANG_GUARD_SECONDS = 60.0
"""Only a failure's bound: a look that reads returns at once; one that writes waits on the lock."""


@contextmanager
def writes_blocked(uri: str, table: str) -> Iterator[None]:
    """``table`` locked against every write by another session until the block ends."""
    with psycopg.connect(uri) as conn:
        conn.execute(f"LOCK TABLE {PREFIX}{table} IN EXCLUSIVE MODE")
        try:
            yield
        finally:
            conn.rollback()


def answered_while_writes_are_blocked(uri: str, table: str, look: Callable[[], Any]) -> list[Any]:
    """``look``'s answer, taken in a thread while ``table`` is locked against writes (empty when
    the look waited on the lock: it meant to write)."""
    answers: list[Any] = []
    with writes_blocked(uri, table):
        thread = threading.Thread(target=lambda: answers.append(look()), daemon=True)
        thread.start()
        thread.join(HANG_GUARD_SECONDS)
        done = list(answers)
    thread.join()
    return done


def test_an_idle_cron_look_writes_nothing(postgres_uri: str) -> None:
    with closing(PostgresCronStore(postgres_uri)) as crons:
        crons.add(a_cron(next_run_at=600.0))
        assert answered_while_writes_are_blocked(
            postgres_uri, "crons", lambda: (crons.next_due(), crons.due(100.0))) == [(600.0, [])]


def test_an_idle_webhook_look_writes_nothing(postgres_uri: str) -> None:
    with closing(PostgresRunStore(postgres_uri)), closing(PostgresWebhookStore(postgres_uri)) as hooks:
        look = answered_while_writes_are_blocked(postgres_uri, "webhooks", lambda: hooks.has_due(100.0))
    assert look == [False]
