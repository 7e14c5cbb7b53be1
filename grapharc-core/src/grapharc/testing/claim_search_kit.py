"""The search half of the ``ClaimStore`` contract: ``add_many``, ``search`` (against the exact
BM25F scan), ``retrieve`` and ``contradictions`` over the store.

``ClaimStoreConformance`` (``grapharc.testing.claim_store_kit``) includes these tests; a store
subclasses that, not this.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grapharc.memory.bm25f import exact_search
from grapharc.memory.claims import (
    ClaimAlreadySupersededError,
    ClaimStore,
    DuplicateClaimError,
    InvalidSearchError,
)
from grapharc.memory.conflicts import contradictions
from grapharc.memory.retrieval import retrieve
from grapharc.testing.claims import make_claim, varied_claims
from grapharc.testing.store_kit import StoreKit


def assert_exact_top_k(store: ClaimStore, query: str, k: int,
                       include_superseded: bool = False) -> None:
    """``store.search`` returns a top-k of the exact scan: each claim with its exact score,
    and the same sequence of scores (claims tied on a score may come in either order)."""
    everything = store.all(include_superseded=True)
    exact = exact_search(everything, query, len(everything), include_superseded)
    exact_scores = {found.claim.id: found.score for found in exact}
    found = store.search(query, k=k, include_superseded=include_superseded)
    assert [hit.score for hit in found] == pytest.approx([hit.score for hit in exact[:k]],
                                                         rel=1e-9)
    for hit in found:
        assert hit.score == pytest.approx(exact_scores[hit.claim.id], rel=1e-9)
        assert hit.claim == store.get(hit.claim.id)


class ClaimSearchConformance(StoreKit[ClaimStore]):
    """The search half of the ``ClaimStore`` contract as pytest tests."""

    def test_add_many_stores_a_batch_in_order(self, store: ClaimStore) -> None:
        batch = [make_claim("Tokyo", f"v{n}", run_id=f"run-{n}" if n % 2 else None)
                 for n in range(5)]
        assert store.add_many(batch) == batch
        assert store.all() == batch

    @pytest.mark.parametrize("clash", ["stored", "repeated"])
    def test_add_many_with_a_taken_id_writes_nothing(self, store: ClaimStore, clash: str) -> None:
        kept = store.add(make_claim("Kyoto", claim_id="taken"))
        batch = [make_claim("Tokyo", "v1", claim_id="fresh"),
                 make_claim("Tokyo", "v2", claim_id="taken" if clash == "stored" else "fresh")]
        with pytest.raises(DuplicateClaimError, match="taken" if clash == "stored" else "fresh"):
            store.add_many(batch)
        assert store.all(include_superseded=True) == [kept]
        assert store.search("Tokyo") == []

    def test_add_many_with_a_claim_marked_superseded_writes_nothing(
        self, store: ClaimStore
    ) -> None:
        marked = make_claim("Tokyo", claim_id="c2").model_copy(update={"superseded_by": "c9"})
        with pytest.raises(ClaimAlreadySupersededError, match="c2"):
            store.add_many([make_claim("Tokyo", claim_id="c1"), marked])
        assert store.all(include_superseded=True) == []
        assert store.add_many([]) == []

    def test_search_ranks_a_subject_match_above_an_object_match(self, store: ClaimStore) -> None:
        in_object = store.add(make_claim("Kyoto", "Babbage", predicate="admired"))
        in_subject = store.add(make_claim("Babbage", "Kyoto", predicate="visited"))
        store.add_many([make_claim(f"filler {n}", "nothing here") for n in range(6)])
        found = store.search("babbage")
        assert [hit.claim for hit in found] == [in_subject, in_object]
        assert found[0].score > found[1].score > 0

    def test_search_matches_the_exact_scan_top_k(self, store: ClaimStore) -> None:
        claims = varied_claims(240)
        store.add_many(claims)
        for old, n in zip(claims[::9], range(1000), strict=False):
            store.supersede(old.id, make_claim(old.subject, f"corrected {n}",
                                               predicate=old.predicate))
        for query in ("Tokyo population", "Babbage engine", "東京", "Grace Hopper compiler",
                      "notes written by Ada", "नई दिल्ली city", "corrected"):
            assert_exact_top_k(store, query, k=10)
            assert_exact_top_k(store, query, k=3, include_superseded=True)

    def test_search_leaves_out_superseded_claims_unless_asked(self, store: ClaimStore) -> None:
        old = store.add(make_claim("Tokyo", "8 million", predicate="population"))
        new = store.supersede(old.id, make_claim("Tokyo", "14 million", predicate="population"))
        store.add(make_claim("Kyoto", "1.5 million", predicate="population"))
        assert [hit.claim for hit in store.search("Tokyo")] == [new]
        with_history = [hit.claim for hit in store.search("Tokyo", include_superseded=True)]
        assert with_history == [store.get(old.id), new]

    def test_search_skips_a_long_run_of_superseded_claims(self, store: ClaimStore) -> None:
        head = store.add(make_claim("Counter", "0"))
        for value in range(1, 60):
            head = store.supersede(head.id, make_claim("Counter", str(value)))
        store.add_many([make_claim(f"Other {n}", "counter value") for n in range(3)])
        assert store.search("counter", k=1)[0].claim == head
        assert_exact_top_k(store, "counter", k=2)
        assert_exact_top_k(store, "counter", k=50, include_superseded=True)

    def test_search_finds_terms_in_other_scripts_and_honours_k(self, store: ClaimStore) -> None:
        tokyo = store.add(make_claim("東京", "首都"))
        store.add(make_claim("北京", "首都"))
        store.add_many([make_claim("Paris", f"capital {n}") for n in range(5)])
        assert [hit.claim for hit in store.search("東京の人口", k=1)] == [tokyo]
        assert len(store.search("capital", k=2)) == 2

    def test_search_words_are_plain_words_never_query_syntax(self, store: ClaimStore) -> None:
        near = store.add(make_claim("Near and far", "not or", predicate="title"))
        store.add(make_claim("Elsewhere", "nothing"))
        for query in ("AND", "or NOT", "NEAR(far)", 'far" OR "x', "far*", "title:near"):
            assert [hit.claim for hit in store.search(query)] == [near], query

    def test_search_with_no_terms_finds_nothing_and_k_below_one_is_refused(
        self, store: ClaimStore
    ) -> None:
        store.add(make_claim("Tokyo"))
        assert store.search("?! ...") == []
        assert store.search("unmatched") == []
        with pytest.raises(InvalidSearchError, match="k=0"):
            store.search("Tokyo", k=0)

    def test_retrieve_walks_from_a_claims_object_to_facts_about_it(
        self, store: ClaimStore
    ) -> None:
        link = store.add(make_claim("Ada Lovelace", "Charles Babbage", predicate="worked with"))
        engine = store.add(make_claim("Charles Babbage", "Analytical Engine", predicate="designed"))
        further = store.add(make_claim("Analytical Engine", "punched cards", predicate="read"))
        store.add(make_claim("Tokyo", "14 million", predicate="population"))
        hits = retrieve(store, "Ada Lovelace", hops=2, decay=0.5)
        assert [hit.claim for hit in hits] == [link, engine, further]
        assert [hit.score for hit in hits] == pytest.approx([1.0, 0.5, 0.25])
        assert [(hit.via, hit.hops) for hit in hits] == [(None, 0), (link.id, 1), (engine.id, 2)]
        assert [hit.claim for hit in retrieve(store, "Ada Lovelace", hops=0)] == [link]

    def test_contradictions_are_reported_and_nothing_is_written(self, store: ClaimStore) -> None:
        stored = store.add(make_claim("Tokyo", "14 million", predicate="population"))
        store.add(make_claim("Tokyo", "Koike", predicate="governor"))
        before = store.all(include_superseded=True)
        assert contradictions(store, make_claim("TOKYO.", "13 million", predicate="Population")) \
            == [stored]
        assert contradictions(store, make_claim("Tokyo", "14  Million", predicate="population")) \
            == []
        assert contradictions(store, stored) == []
        assert store.all(include_superseded=True) == before

    def test_the_search_index_survives_close_and_reopen(self, tmp_path: Path) -> None:
        if not self.durable:
            pytest.skip("store under test declares durable = False")
        store = self.make_store(tmp_path)
        store.add_many(varied_claims(60))
        store.close()
        reopened = self.reopen_store(tmp_path)
        try:
            reopened.add(make_claim("Grace Hopper", "COBOL compiler", predicate="wrote"))
            assert_exact_top_k(reopened, "Grace Hopper compiler", k=5)
        finally:
            reopened.close()
