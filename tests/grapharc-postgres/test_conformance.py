"""The session-store, run-store, assistant-store and checkpointer kits from core, unchanged, against
``postgresql://`` stores opened through the store hook (LangGraph's own checkpoint conformance
suite included)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from grapharc.postgres.assistants import PostgresAssistantStore
from grapharc.postgres.checkpoints import PostgresCheckpoints
from grapharc.postgres.crons import PostgresCronStore
from grapharc.postgres.runs import PostgresRunStore
from grapharc.postgres.sessions import PostgresSessionStore
from grapharc.stores import open_store
from grapharc.testing.assistant_store_kit import AssistantStoreConformance
from grapharc.testing.checkpointer_kit import CheckpointerConformance
from grapharc.testing.cron_store_kit import CronStoreConformance
from grapharc.testing.run_store_kit import RunStoreConformance
from grapharc.testing.session_store_kit import SessionStoreConformance


class _FreshDatabase:
    """Each test gets its own database; ``make_*`` and ``reopen_*`` open stores on it."""

    uri: str

    @pytest.fixture(autouse=True)
    def _database(self, new_database: Callable[[], str]) -> None:
        self.uri = new_database()


class TestPostgresSessionStoreConformance(_FreshDatabase, SessionStoreConformance):
    durable = True

    def make_store(self, tmp_path: Path) -> PostgresSessionStore:
        return open_store(self.uri, kind="sessions")


class TestPostgresCheckpointsConformance(_FreshDatabase, CheckpointerConformance):
    durable = True

    def make_provider(self, tmp_path: Path) -> PostgresCheckpoints:
        return open_store(self.uri.replace("postgresql://", "postgres://", 1), kind="checkpoints")

    def session_location(self, tmp_path: Path) -> str:
        return self.uri


class TestPostgresRunStoreConformance(_FreshDatabase, RunStoreConformance):
    durable = True

    def make_store(self, tmp_path: Path) -> PostgresRunStore:
        return open_store(self.uri, kind="runs")


class TestPostgresAssistantStoreConformance(_FreshDatabase, AssistantStoreConformance):
    durable = True

    def make_store(self, tmp_path: Path) -> PostgresAssistantStore:
        return open_store(self.uri, kind="assistants")


class TestPostgresCronStoreConformance(_FreshDatabase, CronStoreConformance):
    durable = True

    def make_store(self, tmp_path: Path) -> PostgresCronStore:
        return open_store(self.uri, kind="crons")
