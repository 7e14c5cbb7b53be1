"""The in-process item store (memory:) keeps the ItemStore contract and opens by URI."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.store.base import BaseStore

from grapharc.errors import ConfigurationError
from grapharc.memory.longterm import (
    GraphARCStore,
    InMemoryItemStore,
    open_long_term_store,
)
from grapharc.memory.retrieval import Embedder
from grapharc.testing.item_store_kit import ItemStoreConformance, MovableClock
from grapharc.testing.item_vector_kit import ItemVectorConformance


class TestInMemoryItemStore(ItemStoreConformance):
    def make_item_store(self, tmp_path: Path, clock: MovableClock) -> InMemoryItemStore:
        return InMemoryItemStore(clock=clock)


def test_memory_uri_opens_a_langgraph_store_over_the_in_process_items() -> None:
    store = open_long_term_store("memory:")
    assert isinstance(store, GraphARCStore) and isinstance(store, BaseStore)
    assert isinstance(store.items, InMemoryItemStore)
    store.put(("users", "ada"), "k", {"text": "hello"})
    assert store.get(("users", "ada"), "k").value == {"text": "hello"}  # type: ignore[union-attr]
    assert open_long_term_store("memory:").get(("users", "ada"), "k") is None


def test_memory_uri_with_a_location_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="takes none"):
        open_long_term_store("memory:somewhere")


class TestInMemoryItemVectors(ItemVectorConformance):
    def make_item_store(self, tmp_path: Path, clock: MovableClock,
                        embedder: Embedder | None) -> InMemoryItemStore:
        return InMemoryItemStore(clock=clock, embedder=embedder)


def test_memory_uri_with_an_embedder_spec_opens_the_vector_channel() -> None:
    store = open_long_term_store("memory:", embedder="hashing:64")
    store.put(("docs",), "k", {"title": "loom", "body": "engine"}, index=["body"])
    assert isinstance(store.items, InMemoryItemStore)
    assert [item.key for item in store.search(("docs",), query="engine")] == ["k"]


def test_without_an_embedder_query_search_is_lexical_only() -> None:
    store = InMemoryItemStore()
    store.put(("docs",), "automobile", {"text": "an automobile"})
    assert store.search(("docs",), query="car") == []
