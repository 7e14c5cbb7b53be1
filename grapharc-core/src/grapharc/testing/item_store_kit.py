"""A conformance kit for ``ItemStore`` backends of the long-term store, ours or a third party's.

Subclass ``ItemStoreConformance`` in a class pytest collects (``Test...``) and implement
``make_item_store(tmp_path, clock)``: the store must read the time from ``clock`` (a
``MovableClock`` the tests move to make items expire). Every ``test_`` method then runs
against it, directly and through ``GraphARCStore`` (LangGraph's ``BaseStore`` interface).
``query`` ranking is checked against ``reference_ranking``, a plain BM25 scan over the same
texts. Set ``durable = True`` to also prove items survive ``close()`` and reopening;
``reopen_item_store(tmp_path, clock)`` defaults to ``make_item_store(tmp_path, clock)``.
LangGraph publishes no conformance suite for ``BaseStore`` (its ``langgraph-checkpoint-conformance``
covers checkpointers only), so this kit is the contract.

    class TestMyItems(ItemStoreConformance):
        durable = True

        def make_item_store(self, tmp_path, clock):
            return MyItemStore(tmp_path / "items.db", clock=clock)
"""

from __future__ import annotations

import asyncio
import math
import random
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, MatchCondition, Op, PutOp

from grapharc.memory.bm25f import idf, term_score
from grapharc.memory.longterm.contracts import (
    MAX_PAGE_NUMBER,
    IndexFields,
    InvalidItemError,
    InvalidItemNamespaceError,
    InvalidItemSearchError,
    ItemStore,
    ItemStoreClosedError,
)
from grapharc.memory.longterm.store import GraphARCStore
from grapharc.memory.longterm.texts import term_counts
from grapharc.memory.terms import query_terms
from grapharc.testing.store_kit import race

START = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
WORDS = ("ada", "babbage", "engine", "note", "program", "loom", "cards", "number", "bernoulli",
         "analytical", "difference", "poetry", "science", "letter", "mathematics")


class MovableClock:
    """A clock the tests move by hand; starts at ``START``."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, minutes: float) -> None:
        """Move the clock ``minutes`` ahead."""
        self.now += timedelta(minutes=minutes)


def reference_ranking(documents: Mapping[str, tuple[Mapping[str, Any], IndexFields]], query: str
                      ) -> list[tuple[str, float]]:
    """Every document holding a query term, by BM25 score (the memory plane's ``term_score`` over
    ``texts.term_counts``), scanned one by one: what ``query`` search must return."""
    counted = {name: term_counts(value, index) for name, (value, index) in documents.items()}
    if not counted:
        return []
    average = sum(length for _, length in counted.values()) / len(counted)
    wanted = query_terms(query)
    idfs = [idf(len(counted), sum(1 for freqs, _ in counted.values() if term in freqs)) for term in wanted]
    scored = []
    for name, (freqs, length) in counted.items():
        held = [(term, term_idf) for term, term_idf in zip(wanted, idfs, strict=True) if term in freqs]
        if held:
            scored.append((name, sum(term_score(term_idf, freqs[term], length, average)
                                     for term, term_idf in held)))
    return sorted(scored, key=lambda pair: -pair[1])


class ItemStoreConformance(ABC):
    """The ``ItemStore`` contract as pytest tests; subclass it and implement ``make_item_store``."""

    durable: bool = False

    @abstractmethod
    def make_item_store(self, tmp_path: Path, clock: MovableClock) -> ItemStore:
        """Return a new, empty item store located under ``tmp_path`` that reads time from ``clock``."""

    def reopen_item_store(self, tmp_path: Path, clock: MovableClock) -> ItemStore:
        """Return the store ``make_item_store`` made, opened again after it was closed."""
        return self.make_item_store(tmp_path, clock)

    @pytest.fixture
    def clock(self) -> MovableClock:
        return MovableClock()

    @pytest.fixture
    def store(self, tmp_path: Path, clock: MovableClock) -> Iterator[ItemStore]:
        with closing(self.make_item_store(tmp_path, clock)) as store:
            yield store

    @pytest.fixture
    def langgraph_store(self, store: ItemStore) -> GraphARCStore:
        return GraphARCStore(store)

    # storage

    def test_store_satisfies_the_item_store_protocol(self, store: ItemStore) -> None:
        assert isinstance(store, ItemStore)

    def test_a_put_item_comes_back_equal_with_its_times(self, store: ItemStore,
                                                        clock: MovableClock) -> None:
        value = {"text": "Ada wrote notes", "tags": ["math", None, 1.5], "nested": {"deep": True}}
        store.put(("users", "ada"), "profile", value)
        found = store.get(("users", "ada"), "profile")
        assert found is not None
        assert (found.namespace, found.key, found.value) == (("users", "ada"), "profile", value)
        assert found.created_at == found.updated_at == START
        assert found.expires_at is None and found.score is None

    def test_overwriting_keeps_created_at_and_moves_updated_at(self, store: ItemStore,
                                                               clock: MovableClock) -> None:
        store.put(("users",), "ada", {"v": 1})
        clock.advance(5)
        store.put(("users",), "ada", {"v": 2})
        found = store.get(("users",), "ada")
        assert found is not None and found.value == {"v": 2}
        assert (found.created_at, found.updated_at) == (START, START + timedelta(minutes=5))

    def test_a_returned_value_is_the_callers_own_copy(self, store: ItemStore) -> None:
        value = {"list": [1, 2]}
        store.put(("users",), "ada", value)
        value["list"].append(3)
        first = store.get(("users",), "ada")
        assert first is not None and first.value == {"list": [1, 2]}
        first.value["list"].append(4)
        again = store.get(("users",), "ada")
        assert again is not None and again.value == {"list": [1, 2]}

    def test_keys_are_separate_per_namespace(self, store: ItemStore) -> None:
        store.put(("a",), "k", {"n": 1})
        store.put(("a", "b"), "k", {"n": 2})
        store.put(("b",), "k", {"n": 3})
        assert [store.get(ns, "k").value["n"] for ns in (("a",), ("a", "b"), ("b",))] == [1, 2, 3]  # type: ignore[union-attr]
        assert store.get(("c",), "k") is None

    def test_delete_removes_the_item_and_a_missing_one_is_no_error(self, store: ItemStore) -> None:
        store.put(("a",), "k", {"text": "gone soon"})
        store.delete(("a",), "k")
        store.delete(("a",), "never-there")
        assert store.get(("a",), "k") is None
        assert store.search(("a",)) == []
        assert store.search(("a",), query="gone") == []
        assert store.list_namespaces() == []

    @pytest.mark.parametrize("namespace", [(), ("",), ("a.b",), ("a", "x\x00"), ("a", 3)])
    def test_a_namespace_langgraph_refuses_is_refused_for_writes(self, store: ItemStore,
                                                                 namespace: Any) -> None:
        with pytest.raises(InvalidItemNamespaceError) as refused:
            store.put(namespace, "k", {"v": 1})
        assert isinstance(refused.value, InvalidNamespaceError)
        assert store.list_namespaces() == []

    @pytest.mark.parametrize("value", [["not", "an", "object"], "text", {"bad": {1, 2}},
                                       {"nan": math.nan}, {1: "int key"}])
    def test_a_value_that_is_not_a_json_object_is_refused_and_nothing_stored(
            self, store: ItemStore, value: Any) -> None:
        with pytest.raises(InvalidItemError):
            store.put(("a",), "k", value)
        assert store.get(("a",), "k") is None

    @pytest.mark.parametrize("ttl", [0, -1, math.inf, "5", True])
    def test_a_time_to_live_that_is_not_positive_minutes_is_refused(self, store: ItemStore,
                                                                      ttl: Any) -> None:
        with pytest.raises(InvalidItemError, match="time to live"):
            store.put(("a",), "k", {"v": 1}, ttl_minutes=ttl)
        assert store.get(("a",), "k") is None

    def test_a_closed_store_refuses_calls(self, tmp_path: Path, clock: MovableClock) -> None:
        store = self.make_item_store(tmp_path, clock)
        store.close()
        with pytest.raises(ItemStoreClosedError):
            store.get(("a",), "k")

    def test_concurrent_writers_all_land(self, store: ItemStore) -> None:
        won, refused = race(8, lambda i: store.put(("race", f"n{i % 2}"), f"k{i}", {"text": f"writer {i}"}))
        assert len(won) == 8 and refused == []
        assert len(store.search(("race",), limit=20)) == 8
        assert len(store.search(("race",), query="writer", limit=20)) == 8

    # search without a query, and filters

    def test_search_scopes_by_whole_labels_newest_first_and_pages(self, store: ItemStore,
                                                                  clock: MovableClock) -> None:
        for number in range(5):
            store.put(("docs", "ada"), f"k{number}", {"n": number})
            clock.advance(1)
        store.put(("docs", "adam"), "other", {"n": 99})
        store.put(("docsx",), "other", {"n": 98})
        store.put(("docs/x",), "slashed", {"n": 97})
        store.put(("docs-x",), "dashed", {"n": 96})
        assert [i.key for i in store.search(("docs", "ada"))] == ["k4", "k3", "k2", "k1", "k0"]
        assert [i.key for i in store.search(("docs", "ada"), limit=2, offset=1)] == ["k3", "k2"]
        assert [i.key for i in store.search(("docs",), limit=2)] == ["other", "k4"]
        assert len(store.search((), limit=100)) == 9
        assert store.search(("docs", "ada"), limit=0) == []
        assert all(item.score is None for item in store.search(("docs",)))

    def test_filters_follow_langgraphs_operators(self, store: ItemStore) -> None:
        rows: dict[str, dict[str, Any]] = {"a": {"n": 1, "kind": "x", "meta": {"lang": "en"}, "flag": True},
                "b": {"n": 5, "kind": "y", "meta": {"lang": "fr"}, "flag": 1},
                "c": {"n": 9.5, "kind": "x", "when": "2026-02-01"},
                "d": {"n": "7", "kind": ["x"]}}
        for key, value in rows.items():
            store.put(("f",), key, value)

        def keys(filter: dict[str, Any]) -> set[str]:
            return {item.key for item in store.search(("f",), filter=filter, limit=50)}

        assert keys({"kind": "x"}) == {"a", "c"}
        assert keys({"kind": {"$eq": "x"}}) == {"a", "c"}
        assert keys({"kind": {"$ne": "x"}}) == {"b", "d"}
        assert keys({"n": {"$gt": 1}}) == {"b", "c"}
        assert keys({"n": {"$gte": 1, "$lt": 9.5}}) == {"a", "b"}
        assert keys({"n": {"$lte": 5}}) == {"a", "b"}
        assert keys({"n": 1.0}) == {"a"}
        assert keys({"meta": {"lang": "fr"}}) == {"b"}
        assert keys({"flag": True}) == {"a"}
        assert keys({"kind": ["x"]}) == {"d"}
        assert keys({"when": {"$gte": "2026-01-01"}}) == {"c"}
        assert keys({"missing": None}) == set(rows)
        assert keys({"kind": "x", "n": {"$gt": 2}}) == {"c"}

    @pytest.mark.parametrize("filter", [{"n": {"$regex": "x"}}, {"n": {"$gt": [1]}}, {"n": {}}, ["n"]])
    def test_a_filter_that_cannot_be_read_is_refused(self, store: ItemStore, filter: Any) -> None:
        with pytest.raises(InvalidItemSearchError):
            store.search(("f",), filter=filter)

    @pytest.mark.parametrize("page", [{"limit": -1}, {"offset": -2}])
    def test_a_negative_page_is_refused(self, store: ItemStore, page: dict[str, int]) -> None:
        with pytest.raises(InvalidItemSearchError):
            store.search(("f",), limit=page.get("limit", 10), offset=page.get("offset", 0))

    @pytest.mark.parametrize("query", [None, "engine"])
    def test_the_largest_page_is_served_and_a_larger_one_refused(self, store: ItemStore,
                                                                 query: str | None) -> None:
        store.put(("f",), "k", {"text": "engine"})
        assert store.search(("f",), query=query, limit=MAX_PAGE_NUMBER, offset=MAX_PAGE_NUMBER) == []
        for limit, offset in ((MAX_PAGE_NUMBER + 1, 0), (10, 10**30)):
            with pytest.raises(InvalidItemSearchError, match="above the largest"):
                store.search(("f",), query=query, limit=limit, offset=offset)

    # search with a query

    def test_query_returns_only_matching_items_best_first_with_scores(self, store: ItemStore) -> None:
        store.put(("m",), "twice", {"text": "engine engine notes"})
        store.put(("m",), "once", {"text": "the engine and a very long tail of other words here"})
        store.put(("m",), "none", {"text": "poetry"})
        found = store.search(("m",), query="Engine")
        assert [item.key for item in found] == ["twice", "once"]
        assert found[0].score is not None and found[1].score is not None
        assert found[0].score > found[1].score > 0

    def test_query_ranks_as_the_memory_planes_bm25_scan(self, store: ItemStore) -> None:
        chooser = random.Random(35)  # noqa: S311 (a repeatable corpus, not a secret)
        documents: dict[str, tuple[dict[str, Any], IndexFields]] = {}
        for number in range(120):
            value = {"text": " ".join(chooser.choices(WORDS, k=chooser.randint(1, 9))),
                     "title": chooser.choice(WORDS), "n": number}
            index: IndexFields = chooser.choice([None, ["text"], False])
            store.put(("corpus", f"p{number % 3}"), f"k{number}", value, index=index)
            documents[f"k{number}"] = (value, index)
        for query in ("engine", "ada program", "bernoulli number cards", "loom poetry science"):
            expected = reference_ranking(documents, query)[:15]
            found = store.search(("corpus",), query=query, limit=15)
            scores = [item.score or 0.0 for item in found]
            assert scores == pytest.approx([score for _, score in expected])
            cut = expected[-1][1] + 1e-9  # items tied at the last place may differ; those above may not
            assert {item.key for item, score in zip(found, scores, strict=True) if score > cut} == \
                {key for key, score in expected if score > cut}

    def test_index_false_hides_from_query_and_a_field_list_indexes_only_those(
            self, store: ItemStore) -> None:
        store.put(("i",), "hidden", {"text": "engine"}, index=False)
        store.put(("i",), "titled", {"title": "loom", "body": "engine"}, index=["title"])
        store.put(("i",), "nested", {"notes": [{"t": "engine"}, {"t": "cards"}]}, index=["notes[*].t"])
        assert {item.key for item in store.search(("i",), query="engine")} == {"nested"}
        assert {item.key for item in store.search(("i",), query="loom")} == {"titled"}
        assert {item.key for item in store.search(("i",), filter={"text": "engine"})} == {"hidden"}

    def test_query_honours_the_prefix_the_filter_and_the_page(self, store: ItemStore) -> None:
        for number in range(30):
            store.put(("q", "odd" if number % 2 else "even"), f"k{number}",
                      {"text": "engine " * (1 + number % 4), "n": number})
        store.put(("other",), "x", {"text": "engine"})
        odd = store.search(("q", "odd"), query="engine", limit=100)
        assert {item.key for item in odd} == {f"k{n}" for n in range(1, 30, 2)}
        big = store.search(("q",), query="engine", filter={"n": {"$gte": 20}}, limit=100)
        assert {item.key for item in big} == {f"k{n}" for n in range(20, 30)}
        whole = store.search(("q",), query="engine", limit=30)
        assert [item.key for item in store.search(("q",), query="engine", limit=5, offset=5)] == \
            [item.key for item in whole[5:10]]

    def test_an_overwrite_is_found_by_its_new_text_only(self, store: ItemStore) -> None:
        store.put(("w",), "k", {"text": "babbage"})
        store.put(("w",), "k", {"text": "lovelace"})
        assert store.search(("w",), query="babbage") == []
        assert [item.key for item in store.search(("w",), query="lovelace")] == ["k"]

    def test_a_query_without_terms_finds_nothing(self, store: ItemStore) -> None:
        store.put(("w",), "k", {"text": "babbage"})
        assert store.search(("w",), query="?! ...") == []

    # time to live

    def test_an_item_expires_after_its_ttl_everywhere(self, store: ItemStore, clock: MovableClock) -> None:
        store.put(("t", "a"), "short", {"text": "engine"}, ttl_minutes=10)
        store.put(("t", "b"), "long", {"text": "engine"})
        found = store.get(("t", "a"), "short", refresh_ttl=False)
        assert found is not None and found.expires_at == START + timedelta(minutes=10)
        assert found.ttl_minutes == 10
        clock.advance(10)
        assert store.get(("t", "a"), "short") is None
        assert [item.key for item in store.search(("t",))] == ["long"]
        assert [item.key for item in store.search(("t",), query="engine")] == ["long"]
        assert store.list_namespaces() == [("t", "b")]

    def test_a_read_refreshes_the_ttl_unless_told_not_to(self, store: ItemStore,
                                                         clock: MovableClock) -> None:
        for key in ("read", "searched", "peeked"):
            store.put(("t",), key, {"text": "engine", "name": key}, ttl_minutes=10)
        clock.advance(8)
        assert store.get(("t",), "read") is not None
        assert [item.key for item in store.search(("t",), query="engine", filter={"name": "searched"})] \
            == ["searched"]
        assert store.get(("t",), "peeked", refresh_ttl=False) is not None
        clock.advance(8)
        assert store.get(("t",), "peeked") is None
        left = store.search(("t",), limit=10, refresh_ttl=False)
        assert {item.key for item in left} == {"read", "searched"}
        clock.advance(8)
        assert store.search(("t",), limit=10) == []

    def test_sweep_deletes_expired_items_and_says_how_many(self, store: ItemStore,
                                                           clock: MovableClock) -> None:
        store.put(("t",), "a", {"v": 1}, ttl_minutes=1)
        store.put(("t",), "b", {"v": 1}, ttl_minutes=1)
        store.put(("t",), "c", {"v": 1}, ttl_minutes=60)
        assert store.sweep() == 0
        clock.advance(2)
        assert store.sweep() == 2
        assert store.sweep() == 0
        assert [item.key for item in store.search(("t",))] == ["c"]

    def test_writing_over_an_expired_item_starts_a_new_one(self, store: ItemStore,
                                                          clock: MovableClock) -> None:
        store.put(("t",), "k", {"v": 1}, ttl_minutes=1)
        clock.advance(2)
        store.put(("t",), "k", {"v": 2})
        found = store.get(("t",), "k")
        assert found is not None and found.created_at == START + timedelta(minutes=2)
        assert found.expires_at is None

    # namespaces

    def test_list_namespaces_matches_prefix_suffix_wildcards_depth_and_pages(self, store: ItemStore) -> None:
        for namespace in [("a", "b", "c"), ("a", "b", "d"), ("a", "e"), ("x", "b", "c"), ("x",)]:
            store.put(namespace, "k", {"v": 1})
        assert store.list_namespaces() == [("a", "b", "c"), ("a", "b", "d"), ("a", "e"),
                                           ("x",), ("x", "b", "c")]
        assert store.list_namespaces(prefix=("a",)) == [("a", "b", "c"), ("a", "b", "d"), ("a", "e")]
        assert store.list_namespaces(prefix=("*", "b")) == [("a", "b", "c"), ("a", "b", "d"), ("x", "b", "c")]
        assert store.list_namespaces(suffix=("b", "c")) == [("a", "b", "c"), ("x", "b", "c")]
        assert store.list_namespaces(suffix=("*", "c"), prefix=("x",)) == [("x", "b", "c")]
        assert store.list_namespaces(max_depth=1) == [("a",), ("x",)]
        assert store.list_namespaces(prefix=("a",), max_depth=2) == [("a", "b"), ("a", "e")]
        assert store.list_namespaces(limit=2, offset=1) == [("a", "b", "d"), ("a", "e")]

    @pytest.mark.parametrize("listing", [{"max_depth": 0}, {"limit": -1}, {"prefix": ("a.b",)}])
    def test_a_listing_that_cannot_be_answered_is_refused(self, store: ItemStore,
                                                          listing: dict[str, Any]) -> None:
        with pytest.raises(InvalidItemSearchError if "prefix" not in listing else InvalidItemNamespaceError):
            store.list_namespaces(**listing)

    # durability

    def test_items_survive_closing_and_reopening(self, tmp_path: Path, clock: MovableClock) -> None:
        if not self.durable:
            pytest.skip("this store keeps nothing across close() (durable = False)")
        store = self.make_item_store(tmp_path, clock)
        store.put(("d", "ada"), "k", {"text": "analytical engine"}, ttl_minutes=30)
        store.put(("d", "bob"), "gone", {"text": "engine"})
        store.delete(("d", "bob"), "gone")
        store.close()
        with closing(self.reopen_item_store(tmp_path, clock)) as reopened:
            found = reopened.get(("d", "ada"), "k", refresh_ttl=False)
            assert found is not None and found.value == {"text": "analytical engine"}
            assert found.expires_at == START + timedelta(minutes=30)
            assert [item.key for item in reopened.search(("d",), query="engine")] == ["k"]
            assert reopened.list_namespaces() == [("d", "ada")]

    # through LangGraph's BaseStore interface

    def test_langgraph_calls_reach_the_items(self, langgraph_store: GraphARCStore,
                                             clock: MovableClock) -> None:
        langgraph_store.put(("users", "ada"), "m1", {"text": "likes engines"}, ttl=5)
        langgraph_store.put(("users", "ada"), "m2", {"text": "writes notes"}, index=False)
        item = langgraph_store.get(("users", "ada"), "m1")
        assert item is not None and item.value == {"text": "likes engines"}
        assert [found.key for found in langgraph_store.search(("users",), query="engines")] == ["m1"]
        filtered = langgraph_store.search(("users",), filter={"text": "writes notes"})
        assert [found.key for found in filtered] == ["m2"]
        assert langgraph_store.list_namespaces(prefix=("users",)) == [("users", "ada")]
        clock.advance(6)
        assert langgraph_store.get(("users", "ada"), "m1") is None
        langgraph_store.delete(("users", "ada"), "m2")
        assert langgraph_store.search(("users",)) == []

    def test_a_batch_runs_in_order_and_async_alike(self, langgraph_store: GraphARCStore) -> None:
        ops: list[Op] = [PutOp(("b",), "k", {"v": 1}), GetOp(("b",), "k"),
                         PutOp(("b",), "k", None), GetOp(("b",), "k")]
        results = langgraph_store.batch(ops)
        assert results[0] is None and results[1].value == {"v": 1} and results[3] is None  # type: ignore[union-attr]
        again = asyncio.run(langgraph_store.abatch(ops))
        assert again[1].value == {"v": 1} and again[3] is None  # type: ignore[union-attr]

    def test_namespace_conditions_of_one_type_are_all_met(self, langgraph_store: GraphARCStore) -> None:
        for namespace in [("a", "b", "c"), ("a", "x", "c"), ("z", "b", "c")]:
            langgraph_store.put(namespace, "k", {"v": 1})
        both = ListNamespacesOp((MatchCondition("prefix", ("a",)), MatchCondition("prefix", ("*", "b"))))
        never = ListNamespacesOp((MatchCondition("prefix", ("a",)), MatchCondition("prefix", ("z",))))
        assert langgraph_store.batch([both, never]) == [[("a", "b", "c")], []]

    def test_langgraphs_label_rules_hold_for_ops_built_by_hand(self, langgraph_store: GraphARCStore) -> None:
        with pytest.raises(InvalidNamespaceError):
            langgraph_store.batch([GetOp(("a.b",), "k")])

    def test_the_langgraph_root_is_refused_by_put_and_taken_from_a_batch_as_langgraph_does(
            self, langgraph_store: GraphARCStore) -> None:
        with pytest.raises(InvalidNamespaceError):
            langgraph_store.put(("langgraph", "foo"), "bar", {"v": 1})
        assert langgraph_store.get(("langgraph", "foo"), "bar") is None
        langgraph_store.batch([PutOp(("langgraph", "foo"), "bar", {"v": 1})])
        assert [item.key for item in langgraph_store.search(("langgraph", "foo"))] == ["bar"]
        langgraph_store.put(("foo", "langgraph"), "bar", {"v": 2})
        assert langgraph_store.get(("foo", "langgraph"), "bar").value == {"v": 2}  # type: ignore[union-attr]
