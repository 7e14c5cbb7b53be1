"""SQLiteItemStore keeps the ItemStore contract on disk, across processes, and the vector channel's
with an embedder (a file of schema version 1 gains the vector column when opened)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from grapharc.errors import ConfigurationError
from grapharc.memory.longterm import GraphARCStore, InvalidItemSearchError, open_long_term_store
from grapharc.memory.retrieval import Embedder
from grapharc.memory.sqlite import items as items_module
from grapharc.memory.sqlite.items import SQLiteItemStore
from grapharc.testing.item_store_kit import ItemStoreConformance, MovableClock
from grapharc.testing.item_vector_kit import ConceptEmbedder, ItemVectorConformance

WRITER = """
import sys
from grapharc.memory.longterm import open_long_term_store

store = open_long_term_store("sqlite:" + sys.argv[1])
store.put(("users", "ada"), "m1", {"text": "the analytical engine", "year": 1843})
store.put(("users", "ada"), "m2", {"text": "notes on the engine"}, ttl=60)
store.put(("users", "bob"), "m3", {"text": "a loom"})
store.delete(("users", "bob"), "m3")
store.close()
"""

READER = """
import json, sys
from grapharc.memory.longterm import open_long_term_store

store = open_long_term_store("sqlite:" + sys.argv[1])
print(json.dumps({
    "get": store.get(("users", "ada"), "m1").value,
    "search": [item.key for item in store.search(("users",), query="engine analytical")],
    "filtered": [item.key for item in store.search(("users",), filter={"year": {"$gte": 1800}})],
    "namespaces": store.list_namespaces(),
}))
"""


class TestSQLiteItemStore(ItemStoreConformance):
    durable = True

    def make_item_store(self, tmp_path: Path, clock: MovableClock) -> SQLiteItemStore:
        return SQLiteItemStore(tmp_path / "items.db", clock=clock)


class TestSQLiteItemVectors(ItemVectorConformance):
    durable = True

    def make_item_store(self, tmp_path: Path, clock: MovableClock,
                        embedder: Embedder | None) -> SQLiteItemStore:
        return SQLiteItemStore(tmp_path / "items.db", clock=clock, embedder=embedder)


def test_a_file_of_schema_version_1_gains_the_vector_column_and_keeps_its_items(tmp_path: Path) -> None:
    path = tmp_path / "items.db"
    SQLiteItemStore(path).put(("d",), "old", {"text": "an old automobile"})
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("ALTER TABLE items DROP COLUMN vector")  # as version 1 made it
        conn.execute("UPDATE schema_versions SET version = 1 WHERE component = 'items'")
    store = SQLiteItemStore(path, embedder=ConceptEmbedder())
    store.put(("d",), "automobile", {"text": "an automobile"})
    assert [item.key for item in store.search(("d",), query="car")] == ["automobile"]
    assert [item.key for item in store.search(("d",), query="old")] == ["old"]
    store.close()
    with closing(sqlite3.connect(path)) as conn:
        version = conn.execute("SELECT version FROM schema_versions WHERE component = 'items'").fetchone()
    assert version == (3,)


def test_a_file_of_schema_version_2_gets_seqs_never_used_twice_and_keeps_its_items(tmp_path: Path) -> None:
    path = tmp_path / "items.db"
    with closing(SQLiteItemStore(path, embedder=ConceptEmbedder())) as store:
        store.put(("d",), "old", {"text": "an old automobile"})
        store.put(("d",), "newest", {"text": "a vehicle"})
    with closing(sqlite3.connect(path)) as conn, conn:  # as version 2 made it: seq without AUTOINCREMENT
        conn.execute(items_module._ITEMS.format(name="items_v2").replace(" AUTOINCREMENT", ""))
        conn.execute("INSERT INTO items_v2 SELECT * FROM items")
        conn.execute("DROP TABLE items")
        conn.execute("ALTER TABLE items_v2 RENAME TO items")
        conn.execute(items_module._BY_EXPIRY)
        conn.execute("UPDATE schema_versions SET version = 2 WHERE component = 'items'")
    with closing(SQLiteItemStore(path, embedder=ConceptEmbedder())) as store:
        assert [item.key for item in store.search(("d",), query="car")] == ["old", "newest"]
        store.delete(("d",), "newest")
        store.put(("d",), "loom", {"text": "a loom"})
        assert [item.key for item in store.search(("d",), query="weaving")] == ["loom"]
        assert [item.key for item in store.search(("d",), query="car")] == ["old"]
    with closing(sqlite3.connect(path)) as conn:
        version = conn.execute("SELECT version FROM schema_versions WHERE component = 'items'").fetchone()
        assert version == (3,)
        assert conn.execute("SELECT seq FROM items WHERE key = 'loom'").fetchone() == (3,)  # not 2 again
        assert conn.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'items' AND type = 'index' "
                            "AND sql IS NOT NULL").fetchall() == [("items_by_expiry",)]


def test_a_sqlite_uri_with_an_embedder_spec_keeps_vectors_in_the_file(tmp_path: Path) -> None:
    store = open_long_term_store(f"sqlite:{tmp_path / 'items.db'}", embedder="hashing:64")
    store.put(("docs",), "k", {"title": "loom", "body": "engine"}, index=["body"])
    store.close()
    with closing(sqlite3.connect(tmp_path / "items.db")) as conn:
        (vector,) = conn.execute("SELECT vector FROM items").fetchone()
    assert len(vector) == 64 * 8


def test_a_second_process_sees_what_the_first_wrote(tmp_path: Path) -> None:
    path = str(tmp_path / "items.db")
    subprocess.run([sys.executable, "-c", WRITER, path], check=True, timeout=120)
    read = subprocess.run([sys.executable, "-c", READER, path], check=True, timeout=120,
                          capture_output=True, text=True)
    assert json.loads(read.stdout) == {
        "get": {"text": "the analytical engine", "year": 1843},
        "search": ["m1", "m2"],
        "filtered": ["m1"],
        "namespaces": [["users", "ada"]],
    }


def test_sqlite_uri_opens_a_langgraph_store_over_the_file(tmp_path: Path) -> None:
    store = open_long_term_store(f"sqlite:{tmp_path}/items.db")
    assert isinstance(store, GraphARCStore) and isinstance(store.items, SQLiteItemStore)
    store.close()
    with pytest.raises(ConfigurationError, match="names no file"):
        open_long_term_store("sqlite:")


def test_a_filter_field_sqlite_cannot_name_is_refused(tmp_path: Path) -> None:
    store = SQLiteItemStore(tmp_path / "items.db")
    with pytest.raises(InvalidItemSearchError, match="JSON path"):
        store.search(("a",), filter={'say "hi"': 1})
    store.close()


def test_a_broad_prefix_reads_newest_first_and_answers_as_the_index_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SQLiteItemStore(tmp_path / "items.db")
    for number in range(30):
        store.put(("users", f"u{number % 3}"), f"k{number}", {"n": number})
    searches = [(("users",), {}), (("users", "u1"), {}), (("users",), {"filter": {"n": {"$lt": 7}}}),
                (("users",), {"limit": 4, "offset": 9}), ((), {"filter": {"n": 3}})]

    def answers() -> list[list[str]]:
        return [[item.key for item in store.search(prefix, **options)] for prefix, options in searches]

    through_the_index = answers()
    monkeypatch.setattr(items_module, "BROAD_PREFIX", 5)
    assert answers() == through_the_index
    assert through_the_index[0] == [f"k{n}" for n in range(29, 19, -1)]
    assert through_the_index[2] == [f"k{n}" for n in range(6, -1, -1)][:10]
    store.close()


CONCURRENT_WRITER = """
import sys
from grapharc.memory.sqlite.items import SQLiteItemStore

store = SQLiteItemStore(sys.argv[1])
for number in range(40):
    store.put(("shared",), f"{sys.argv[2]}-{number}", {"text": f"engine note {number}", "by": sys.argv[2]})
store.close()
"""


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "items.db")
    # both create the schema if they find none: one waits for the other
    writers = [subprocess.Popen([sys.executable, "-c", CONCURRENT_WRITER, path, name],
                                stderr=subprocess.PIPE, text=True) for name in ("a", "b")]
    for writer in writers:
        _, stderr = writer.communicate(timeout=120)
        assert writer.returncode == 0, stderr
    store = SQLiteItemStore(path)
    assert len(store.search(("shared",), limit=100)) == 80
    assert len(store.search(("shared",), query="engine", limit=100)) == 80
    assert len(store.search(("shared",), filter={"by": "b"}, limit=100)) == 40
    store.close()


def test_a_condition_with_an_integer_past_64_bits_is_refused_naming_it(tmp_path: Path) -> None:
    """SQLite binds a condition's operand as a 64-bit integer: one past that is refused (it failed
    the search with an OverflowError, a 500 over HTTP); the largest one still searches."""
    store = SQLiteItemStore(tmp_path / "items.db")
    store.put(("a",), "k", {"n": 5})
    with pytest.raises(InvalidItemSearchError, match=r"'n': \$gt 10{30} is outside the 64-bit"):
        store.search(("a",), filter={"n": {"$gt": 10**30}})
    with pytest.raises(InvalidItemSearchError, match=r"'n': \$eq -10{30} is outside the 64-bit"):
        store.search(("a",), filter={"n": -10**30})
    assert [item.key for item in store.search(("a",), filter={"n": {"$lt": 2**63 - 1}})] == ["k"]
    store.close()
