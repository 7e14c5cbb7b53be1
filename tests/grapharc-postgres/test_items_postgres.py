"""The PostgreSQL item store (``postgresql:`` kind ``items``) keeps core's ItemStore contract (the
kit, its BM25 ranking against the reference scan included), opens by URI as a LangGraph store, and
migrates a database made before it (migration 10)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from grapharc.memory.longterm import GraphARCStore, open_long_term_store
from grapharc.postgres.items import PostgresItemStore
from grapharc.testing.item_store_kit import ItemStoreConformance, MovableClock


class TestPostgresItemStore(ItemStoreConformance):
    durable = True
    uri: str

    @pytest.fixture(autouse=True)
    def _database(self, new_database: Callable[[], str]) -> None:
        self.uri = new_database()

    def make_item_store(self, tmp_path: Path, clock: MovableClock) -> PostgresItemStore:
        return PostgresItemStore(self.uri, clock=clock)


def test_a_postgresql_uri_opens_a_langgraph_store_whose_items_another_opened_store_reads(
        new_database: Callable[[], str]) -> None:
    uri = new_database()
    writer = open_long_term_store(uri)
    reader = open_long_term_store(uri.replace("postgresql:", "postgres:", 1))
    try:
        assert isinstance(writer, GraphARCStore) and isinstance(writer.items, PostgresItemStore)
        writer.put(("users", "ada"), "note", {"text": "the analytical engine weaves patterns"})
        found = reader.search(("users",), query="engine patterns")
        assert [(item.key, item.value["text"]) for item in found] == [
            ("note", "the analytical engine weaves patterns")]
        assert found[0].score is not None and found[0].score > 0
    finally:
        writer.close()
        reader.close()


def test_the_items_tables_come_with_migration_10_beside_the_sessions(new_database: Callable[[], str]) -> None:
    uri = new_database()
    store = open_long_term_store(uri)
    store.close()
    with psycopg.connect(uri) as conn:
        versions = [row[0] for row in conn.execute("SELECT version FROM grapharc_schema_versions")]
        tables = {row[0] for row in conn.execute(
            "SELECT tablename FROM pg_tables WHERE tablename LIKE 'grapharc_store_%'")}
    assert 10 in versions
    assert tables == {"grapharc_store_items", "grapharc_store_postings", "grapharc_store_groups",
                      "grapharc_store_totals"}
