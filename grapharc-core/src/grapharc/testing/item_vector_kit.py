"""A conformance kit for the vector channel of an ``ItemStore`` given an ``Embedder``.

Subclass ``ItemVectorConformance`` in a class pytest collects and implement
``make_item_store(tmp_path, clock, embedder)``: a new, empty store reading the time from
``clock`` whose ``query`` search adds the vector channel for ``embedder`` (``None``: no channel).
Scores are checked against ``reference_fusion``: the best of the BM25 scan of ``item_store_kit``
scaled so the best is 1.0, plus the cosine similarity of each item's vector to the query's where
it is at least the floor, as ``grapharc.memory.longterm.vectors`` defines the channel. Set
``durable = True`` to also prove vectors survive reopening and that items written before an
embedder was configured are found by their words only.

    class TestMyItemVectors(ItemVectorConformance):
        def make_item_store(self, tmp_path, clock, embedder):
            return MyItemStore(tmp_path / "items.db", clock=clock, embedder=embedder)
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from grapharc.memory.hashing_embedder import HashingEmbedder
from grapharc.memory.longterm.contracts import IndexFields, InvalidItemSearchError, ItemStore
from grapharc.memory.longterm.texts import indexed_texts
from grapharc.memory.longterm.vectors import SIMILARITY_FLOOR
from grapharc.memory.retrieval import Embedder, cosine
from grapharc.testing.item_store_kit import WORDS, MovableClock, reference_ranking

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


def reference_fusion(documents: Mapping[str, tuple[Mapping[str, Any], IndexFields]], query: str,
                     embedder: Embedder, k: int) -> list[tuple[str, float]]:
    """The ``k`` best documents of both channels by fused score (the BM25 channel offers its ``k``
    best, oldest first among ties): what ``query`` search with the vector channel must return,
    computed one document at a time."""
    scores = {}
    lexical = reference_ranking(documents, query)[:k]
    if lexical:
        scores = {name: score / lexical[0][1] for name, score in lexical}
    wanted = embedder.embed([query])[0]
    for name, (value, index) in documents.items():
        texts = indexed_texts(value, index)
        if texts and (similar := cosine(wanted, embedder.embed(["\n".join(texts)])[0])) >= SIMILARITY_FLOOR:
            scores[name] = scores.get(name, 0.0) + similar
    return sorted(scores.items(), key=lambda pair: -pair[1])[:k]


class ItemVectorConformance(ABC):
    """The vector channel's contract as pytest tests; subclass it and implement ``make_item_store``."""

    durable: bool = False

    @abstractmethod
    def make_item_store(self, tmp_path: Path, clock: MovableClock, embedder: Embedder | None) -> ItemStore:
        """Return a new, empty item store under ``tmp_path`` reading time from ``clock``, with the
        vector channel of ``embedder`` (none when it is ``None``)."""

    def reopen_item_store(self, tmp_path: Path, clock: MovableClock, embedder: Embedder | None) -> ItemStore:
        """Return the store ``make_item_store`` made, opened again after it was closed."""
        return self.make_item_store(tmp_path, clock, embedder)

    @pytest.fixture
    def clock(self) -> MovableClock:
        return MovableClock()

    @pytest.fixture
    def embedder(self) -> ConceptEmbedder:
        return ConceptEmbedder()

    @pytest.fixture
    def store(self, tmp_path: Path, clock: MovableClock, embedder: ConceptEmbedder) -> Iterator[ItemStore]:
        with closing(self.make_item_store(tmp_path, clock, embedder)) as store:
            yield store

    def _require_durable(self) -> None:
        if not self.durable:
            pytest.skip("this store keeps nothing across close() (durable = False)")

    def test_a_query_finds_items_by_meaning_with_fused_scores(self, store: ItemStore) -> None:
        store.put(("docs",), "automobile", {"text": "an automobile"})
        store.put(("docs",), "loom", {"text": "weaving loom"})
        store.put(("docs",), "car", {"text": "car motor"})
        found = store.search(("docs",), query="car")
        assert [item.key for item in found] == ["car", "automobile"]
        assert [item.score for item in found] == pytest.approx([1.0 + 2 ** -0.5, 1.0])
        both = store.search(("docs",), query="car loom")
        assert [item.key for item in both] == ["loom", "car", "automobile"]

    def test_fused_scores_match_the_reference_over_a_random_corpus(self, tmp_path: Path,
                                                                    clock: MovableClock) -> None:
        embedder = HashingEmbedder(16)  # few dimensions: many items pass the floor by collision
        chooser = random.Random(35)  # noqa: S311 (a repeatable corpus, not a secret)
        documents: dict[str, tuple[dict[str, Any], IndexFields]] = {}
        with closing(self.make_item_store(tmp_path, clock, embedder)) as store:
            for number in range(80):
                value = {"text": " ".join(chooser.choices(WORDS, k=chooser.randint(1, 9))),
                         "title": chooser.choice(WORDS)}
                index: IndexFields = chooser.choice([None, ["text"], False])
                store.put(("corpus", f"p{number % 3}"), f"k{number}", value, index=index)
                documents[f"k{number}"] = (value, index)
            for query in ("engine", "ada program", "bernoulli number cards"):
                expected = reference_fusion(documents, query, embedder, 12)
                found = store.search(("corpus",), query=query, limit=12)
                assert [item.score for item in found] == pytest.approx([score for _, score in expected])
                cut = expected[-1][1] + 1e-9  # items tied at the last place may differ; those above may not
                assert {item.key for item in found if (item.score or 0.0) > cut} == \
                    {key for key, score in expected if score > cut}

    def test_an_item_without_indexed_text_is_not_embedded_nor_found_by_meaning(
            self, store: ItemStore, embedder: ConceptEmbedder) -> None:
        store.put(("docs",), "hidden", {"text": "car car"}, index=False)
        store.put(("docs",), "titled", {"title": "loom", "body": "automobile"}, index=["title"])
        assert "car car" not in embedder.texts and "automobile" not in embedder.texts
        assert store.search(("docs",), query="car") == []
        assert [item.key for item in store.search(("docs",), query="weaving")] == ["titled"]

    def test_the_vector_channel_keeps_to_the_prefix_the_filter_and_live_items(
            self, store: ItemStore, clock: MovableClock) -> None:
        store.put(("docs", "a"), "kept", {"text": "automobile", "n": 1})
        store.put(("docs", "a"), "filtered", {"text": "vehicle", "n": 2})
        store.put(("docs", "b"), "elsewhere", {"text": "automobile", "n": 1})
        store.put(("docs", "a"), "expiring", {"text": "vehicle", "n": 1}, ttl_minutes=1)
        store.put(("docs", "a"), "deleted", {"text": "automobile", "n": 1})
        store.delete(("docs", "a"), "deleted")
        store.put(("docs", "a"), "rewritten", {"text": "automobile", "n": 1})
        store.put(("docs", "a"), "rewritten", {"text": "weaving", "n": 1})
        clock.advance(2)
        found = store.search(("docs", "a"), query="car", filter={"n": 1})
        assert [item.key for item in found] == ["kept"]

    def test_paging_cuts_the_fused_ranking(self, store: ItemStore) -> None:
        for number in range(6):
            store.put(("p",), f"k{number}", {"text": "car " * (number + 1) + "motor"})
        whole = [item.key for item in store.search(("p",), query="automobile", limit=6)]
        assert len(whole) == 6
        paged = store.search(("p",), query="automobile", limit=2, offset=2)
        assert [item.key for item in paged] == whole[2:4]

    def test_a_search_without_a_query_embeds_nothing(self, store: ItemStore,
                                                     embedder: ConceptEmbedder) -> None:
        store.put(("docs",), "k", {"text": "automobile"})
        before = list(embedder.texts)
        assert [item.key for item in store.search(("docs",))] == ["k"]
        assert embedder.texts == before

    def test_an_embedder_whose_dimension_changed_is_refused_clearly(self, tmp_path: Path,
                                                                     clock: MovableClock) -> None:
        class Widening(ConceptEmbedder):
            def embed(self, texts: Sequence[str]) -> list[list[float]]:
                return [[*vector, 1.0] for vector in super().embed(texts)] if "car" in texts else \
                    super().embed(texts)

        with closing(self.make_item_store(tmp_path, clock, Widening())) as store:
            store.put(("docs",), "automobile", {"text": "an automobile"})
            with pytest.raises(InvalidItemSearchError, match="dimensions"):
                store.search(("docs",), query="car")

    def test_vectors_survive_closing_and_reopening(self, tmp_path: Path, clock: MovableClock) -> None:
        self._require_durable()
        store = self.make_item_store(tmp_path, clock, ConceptEmbedder())
        store.put(("d",), "automobile", {"text": "an automobile"})
        store.close()
        quiet = ConceptEmbedder()
        with closing(self.reopen_item_store(tmp_path, clock, quiet)) as reopened:
            assert [item.key for item in reopened.search(("d",), query="car")] == ["automobile"]
        assert quiet.texts == ["car"]

    def test_items_written_without_an_embedder_are_found_by_their_words_only(
            self, tmp_path: Path, clock: MovableClock) -> None:
        self._require_durable()
        store = self.make_item_store(tmp_path, clock, None)
        store.put(("d",), "automobile", {"text": "an automobile"})
        store.close()
        with closing(self.reopen_item_store(tmp_path, clock, ConceptEmbedder())) as reopened:
            assert reopened.search(("d",), query="car") == []
            assert [item.key for item in reopened.search(("d",), query="automobile")] == ["automobile"]
