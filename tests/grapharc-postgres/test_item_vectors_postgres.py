"""The PostgreSQL item store's vector index stays current while other connections write.

The queries' words are in no item, so only the vector channel (``ConceptEmbedder``'s synonyms)
finds anything: an index that missed a write would miss its item.
"""

from __future__ import annotations

import threading
from contextlib import closing

from grapharc.memory.longterm.contracts import StoredItem
from grapharc.postgres.items import PostgresItemStore
from grapharc.testing.item_vector_kit import ConceptEmbedder

WORDS = ("automobile", "motor", "weaving", "vehicle", "loom", "engine", "cards")


def ranked(items: list[StoredItem]) -> list[tuple[str, float | None]]:
    return [(item.key, item.score) for item in items]


def write(uri: str, name: str) -> None:
    """Sixty puts under ("docs", name), deleting some, and the newest written again."""
    with closing(PostgresItemStore(uri, embedder=ConceptEmbedder())) as store:
        for n in range(60):
            store.put(
                ("docs", name), f"{name}{n}", {"text": " ".join(WORDS[(n + i) % 7] for i in range(1 + n % 4))}
            )
            if n % 7 == 0:
                store.delete(("docs", name), f"{name}{n // 2}")
        store.put(("docs", name), f"{name}59", {"text": "vehicle vehicle"})


def test_a_search_sees_what_two_other_connections_wrote_meanwhile(postgres_uri: str) -> None:
    with closing(PostgresItemStore(postgres_uri, embedder=ConceptEmbedder())) as searcher:
        searcher.put(("docs", "own"), "first", {"text": "automobile cards"})
        assert [item.key for item in searcher.search(("docs",), query="car")] == ["first"]
        writers = [threading.Thread(target=write, args=(postgres_uri, name)) for name in ("a", "b")]
        for writer in writers:
            writer.start()
        while any(writer.is_alive() for writer in writers):  # searching while they write
            searcher.search(("docs",), query="car", limit=5)
        for writer in writers:
            writer.join()
        for query in ("car", "car engine", "car weaving"):
            with closing(PostgresItemStore(postgres_uri, embedder=ConceptEmbedder())) as fresh:
                expected = ranked(fresh.search(("docs",), query=query, limit=50))
            assert ranked(searcher.search(("docs",), query=query, limit=50)) == expected
        rewritten = {item.key: item.score for item in searcher.search(("docs", "a"), query="car", limit=50)}
        assert rewritten["a59"] == 1.0  # written again: its new vector, not its first


def test_deleted_rows_are_not_found_and_an_index_of_mostly_deleted_rows_is_read_afresh(
    postgres_uri: str,
) -> None:
    with closing(PostgresItemStore(postgres_uri, embedder=ConceptEmbedder())) as store:
        for n in range(100):
            store.put(("docs",), f"k{n}", {"text": "automobile"})
        assert len(store.search(("docs",), query="car", limit=200)) == 100
        for n in range(99):
            store.delete(("docs",), f"k{n}")
        assert [item.key for item in store.search(("docs",), query="car", limit=200)] == ["k99"]
        assert store._vectors._growing._rows == 1  # the 99 deleted rows were dropped, not kept as dead weight
