"""SQLiteItemStore keeps the ItemStore contract on disk, across processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grapharc.errors import ConfigurationError
from grapharc.memory.longterm import GraphARCStore, InvalidItemSearchError, open_long_term_store
from grapharc.memory.sqlite.items import SQLiteItemStore
from grapharc.testing.item_store_kit import ItemStoreConformance, MovableClock

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
