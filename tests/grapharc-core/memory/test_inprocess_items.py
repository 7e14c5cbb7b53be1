"""The in-process item store (memory:) keeps the ItemStore contract and opens by URI."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from langgraph.store.base import BaseStore

from grapharc.errors import ConfigurationError
from grapharc.memory.longterm import (
    GraphARCStore,
    InMemoryItemStore,
    InvalidItemSearchError,
    open_long_term_store,
)
from grapharc.testing.item_store_kit import ItemStoreConformance, MovableClock


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


CONCEPTS = ({"car", "automobile", "vehicle"}, {"engine", "motor"}, {"loom", "weaving"})


class ConceptEmbedder:
    """A local, deterministic embedder: one dimension per concept, counting its words; it
    records every text it was given."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return [[float(sum(word in concept for word in text.lower().split())) for concept in CONCEPTS]
                for text in texts]


def test_with_an_embedder_query_search_finds_items_by_meaning_too() -> None:
    embedder = ConceptEmbedder()
    store = InMemoryItemStore(embedder=embedder)
    store.put(("docs",), "automobile", {"text": "an automobile"})
    store.put(("docs",), "loom", {"text": "weaving loom"})
    store.put(("docs",), "hidden", {"text": "car car"}, index=False)
    store.put(("other",), "vehicle", {"text": "vehicle"})
    assert "car car" not in embedder.texts
    found = store.search(("docs",), query="car")
    assert [(item.key, item.score) for item in found] == [("automobile", pytest.approx(1.0))]
    both = store.search(("docs",), query="car loom")
    assert [item.key for item in both] == ["loom", "automobile"]
    assert both[0].score == pytest.approx(1.0 + 2 ** -0.5) and both[1].score == pytest.approx(2 ** -0.5)
    assert store.search(("docs",), query="car", filter={"text": "weaving loom"}) == []


def test_without_an_embedder_query_search_is_lexical_only() -> None:
    store = InMemoryItemStore()
    store.put(("docs",), "automobile", {"text": "an automobile"})
    assert store.search(("docs",), query="car") == []


def test_an_embedder_of_the_wrong_dimension_is_refused_clearly() -> None:
    class Shifting(ConceptEmbedder):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            vectors = super().embed(texts)
            return [[*vector, 1.0] for vector in vectors] if "car" in texts else vectors

    store = InMemoryItemStore(embedder=Shifting())
    store.put(("docs",), "automobile", {"text": "an automobile"})
    with pytest.raises(InvalidItemSearchError, match="dimensions"):
        store.search(("docs",), query="car")
