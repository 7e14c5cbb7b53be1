"""The SQLite item store's vector index stays current when other processes and the store itself write.

The queries' words are in no item, so only the vector channel (``ConceptEmbedder``'s synonyms)
finds anything: an index that missed a write would miss its item.
"""

from __future__ import annotations

import subprocess
import sys
from contextlib import closing
from pathlib import Path

from grapharc.memory.longterm.contracts import StoredItem
from grapharc.memory.sqlite.items import SQLiteItemStore
from grapharc.testing.item_vector_kit import ConceptEmbedder

WRITER = """
import sys
from grapharc.memory.sqlite.items import SQLiteItemStore
from grapharc.testing.item_vector_kit import ConceptEmbedder

path, name = sys.argv[1], sys.argv[2]
words = ("automobile", "motor", "weaving", "vehicle", "loom", "engine", "cards")
store = SQLiteItemStore(path, embedder=ConceptEmbedder())
for n in range(60):
    store.put(("docs", name), f"{name}{n}", {"text": " ".join(words[(n + i) % 7] for i in range(1 + n % 4))})
    if n % 7 == 0:
        store.delete(("docs", name), f"{name}{n // 2}")
store.put(("docs", name), f"{name}59", {"text": "vehicle vehicle"})  # the newest row again
store.close()
"""


def ranked(items: list[StoredItem]) -> list[tuple[str, float | None]]:
    return [(item.key, item.score) for item in items]


def test_a_search_sees_what_two_other_processes_wrote_meanwhile(tmp_path: Path) -> None:
    path = tmp_path / "items.db"
    with closing(SQLiteItemStore(path, embedder=ConceptEmbedder())) as searcher:
        searcher.put(("docs", "own"), "first", {"text": "automobile cards"})
        assert [item.key for item in searcher.search(("docs",), query="car")] == ["first"]
        writers = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER, str(path), name], stderr=subprocess.PIPE, text=True
            )
            for name in ("a", "b")
        ]
        while any(writer.poll() is None for writer in writers):  # searching while they write
            searcher.search(("docs",), query="car", limit=5)
        for writer in writers:
            _, stderr = writer.communicate(timeout=120)
            assert writer.returncode == 0, stderr
        for query in ("car", "car engine", "car weaving"):
            with closing(SQLiteItemStore(path, embedder=ConceptEmbedder())) as fresh:
                expected = ranked(fresh.search(("docs",), query=query, limit=50))
            assert ranked(searcher.search(("docs",), query=query, limit=50)) == expected
        rewritten = {item.key: item.score for item in searcher.search(("docs", "a"), query="car", limit=50)}
        assert rewritten["a59"] == 1.0  # the newest row written again: its new vector, not its first


def test_a_search_sees_the_store_s_own_writes_and_deletes(tmp_path: Path) -> None:
    with closing(SQLiteItemStore(tmp_path / "items.db", embedder=ConceptEmbedder())) as store:
        store.put(("docs",), "old", {"text": "automobile"})
        assert [item.key for item in store.search(("docs",), query="car")] == ["old"]
        store.put(("docs",), "new", {"text": "vehicle"})
        store.delete(("docs",), "old")
        assert [item.key for item in store.search(("docs",), query="car")] == ["new"]
        store.put(("docs",), "new", {"text": "motor"})  # the newest row again, another vector
        assert [item.key for item in store.search(("docs",), query="engine")] == ["new"]
        assert store.search(("docs",), query="car") == []
