"""The PostgreSQL item store (``postgresql:`` kind ``items``) keeps core's ItemStore contract (the
kit, its BM25 ranking against the reference scan included), opens by URI as a LangGraph store,
migrates a database made before it (migration 10), ranks in two statements that read only the
items that can reach the top k, and
keeps the vector channel's contract with an embedder (the vectors in migration 11's column)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import psycopg
import pytest
from psycopg.rows import dict_row

from grapharc.memory.longterm import GraphARCStore, open_long_term_store
from grapharc.memory.longterm.contracts import IndexFields
from grapharc.memory.retrieval import Embedder
from grapharc.memory.terms import query_terms
from grapharc.postgres.database import Conn
from grapharc.postgres.item_ranking import rank
from grapharc.postgres.items import PostgresItemStore
from grapharc.testing.item_store_kit import ItemStoreConformance, MovableClock, reference_ranking
from grapharc.testing.item_vector_kit import ItemVectorConformance


class FreshDatabase:
    """A kit's stores in a database of their own per test, kept across reopening."""

    durable = True
    uri: str

    @pytest.fixture(autouse=True)
    def _database(self, new_database: Callable[[], str]) -> None:
        self.uri = new_database()


class TestPostgresItemStore(FreshDatabase, ItemStoreConformance):
    def make_item_store(self, tmp_path: Path, clock: MovableClock) -> PostgresItemStore:
        return PostgresItemStore(self.uri, clock=clock)


class TestPostgresItemVectors(FreshDatabase, ItemVectorConformance):
    def make_item_store(self, tmp_path: Path, clock: MovableClock,
                        embedder: Embedder | None) -> PostgresItemStore:
        return PostgresItemStore(self.uri, clock=clock, embedder=embedder)


def test_a_postgresql_uri_with_an_embedder_spec_keeps_vectors_in_migration_11s_column(
        new_database: Callable[[], str]) -> None:
    uri = new_database()
    store = open_long_term_store(uri, embedder="hashing:64")
    store.put(("docs",), "k", {"title": "loom", "body": "engine"}, index=["body"])
    store.close()
    with psycopg.connect(uri) as conn:
        versions = [row[0] for row in conn.execute("SELECT version FROM grapharc_schema_versions")]
        (vector,) = conn.execute("SELECT vector FROM grapharc_store_items").fetchone()  # type: ignore[misc]
    assert 11 in versions and len(vector) == 64 * 8


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


class CountingConnection:
    """A connection that counts the statements sent through it (each one a round trip)."""

    def __init__(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        self.conn = conn
        self.statements = 0

    def execute(self, query: Any, params: Any = None) -> Any:
        self.statements += 1
        return self.conn.execute(query, params)


@pytest.mark.parametrize("query", ["engine", "engine loom", "loom engine filler"])
def test_a_query_walking_many_groups_takes_two_statements_and_scores_as_the_scan_to_the_bit(
        new_database: Callable[[], str], query: str) -> None:
    uri = new_database()
    store = PostgresItemStore(uri)
    documents: dict[str, tuple[dict[str, Any], IndexFields]] = {}
    for number in range(60):  # each item its own length: every group of "engine" holds one item
        value = {"text": "engine " + "filler " * number + ("loom" if number % 7 == 3 else "")}
        store.put(("s",), f"k{number}", value)
        documents[f"k{number}"] = (value, None)
    store.close()
    with psycopg.connect(uri, row_factory=dict_row) as conn:
        counting = CountingConnection(conn)
        ranked = rank(cast(Conn, counting), query_terms(query), "path LIKE %s", ["s.%"], 10)
    assert [score for score, _ in ranked] == [score for _, score in reference_ranking(documents, query)[:10]]
    assert counting.statements == 2  # the groups, then the ranking: the walk took a statement per step or two


def _items_read(conn: psycopg.Connection[dict[str, Any]]) -> int:
    """How many item rows this transaction fetched by index so far (a count, not a time)."""
    row = conn.execute("SELECT idx_tup_fetch FROM pg_stat_xact_user_tables "
                       "WHERE relname = 'grapharc_store_items'").fetchone()
    return int(row["idx_tup_fetch"]) if row else 0


def test_a_common_query_term_costs_only_the_items_that_can_reach_the_top_k(
        new_database: Callable[[], str]) -> None:
    uri = new_database()
    store = PostgresItemStore(uri)
    documents: dict[str, tuple[dict[str, Any], IndexFields]] = {}
    for number in range(400):  # "common" in every item; "rare" in every 20th; "loom" in every 7th
        value = {"text": " ".join(["common"] * (1 + number % 3) + ["filler"] * (number % 11)
                                  + ["rare"] * (number % 20 == 0) + ["loom"] * (number % 7 == 0))}
        store.put(("s",), f"k{number}", value)
        documents[f"k{number}"] = (value, None)
    store.close()
    query = "rare common loom"
    with psycopg.connect(uri, row_factory=dict_row) as conn:
        before = _items_read(conn)
        ranked = rank(cast(Conn, conn), query_terms(query), "path LIKE %s", ["s.%"], 10)
        read = _items_read(conn) - before
    assert [score for score, _ in ranked] == [score for _, score in reference_ranking(documents, query)[:10]]
    assert read <= 80  # seeds and candidates: 400 items hold "common", 58 hold "loom", 20 "rare"


def test_a_narrow_namespace_reads_more_seeds_rather_than_every_posting(
        new_database: Callable[[], str]) -> None:
    uri = new_database()
    store = PostgresItemStore(uri)
    documents: dict[str, tuple[dict[str, Any], IndexFields]] = {}
    for number in range(400):  # 20 namespaces of 20 items; "common" in each, "engine" in every 8th
        value = {"text": " ".join(["common"] * (1 + number % 3) + ["filler"] * (number % 5)
                                  + ["engine"] * (number % 8 == 3))}
        store.put(("s", f"n{number % 20}"), f"k{number}", value)
        documents[f"k{number}"] = (value, None)
    store.close()
    query = "engine common"
    in_scope = {f"k{number}" for number in range(3, 400, 20)}
    with psycopg.connect(uri, row_factory=dict_row) as conn:
        counting = CountingConnection(conn)
        before = _items_read(conn)
        ranked = rank(cast(Conn, counting), query_terms(query), "path LIKE %s", ["s.n3.%"], 5)
        read = _items_read(conn) - before
    expected = [score for key, score in reference_ranking(documents, query) if key in in_scope][:5]
    assert [score for score, _ in ranked] == expected
    assert counting.statements == 3  # the groups; seeds of which too few were in scope; eight times more
    assert read < 300  # the seeds and a few more, not every item holding "common" (400)
