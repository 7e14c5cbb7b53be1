"""A conformance kit for ``ClaimStore`` implementations, ours or a third party's.

Subclass ``ClaimStoreConformance`` in a class pytest collects (``Test...``),
override ``make_store(tmp_path)``, and every ``test_`` method here runs
against your store, the way LangGraph ships a suite for checkpointers. Besides storage it
checks ``add_many``, ``search`` (against the exact BM25F scan), ``retrieve`` and
``contradictions`` over the store (those tests are ``grapharc.testing.claim_search_kit``'s). Set
``durable = True`` to also prove claims survive ``close()`` and reopening;
``reopen_store(tmp_path)`` defaults to ``make_store(tmp_path)``, which is right
whenever ``make_store`` derives the store's location from ``tmp_path``.

    class TestMyStore(ClaimStoreConformance):
        durable = True

        def make_store(self, tmp_path):
            return MyStore(tmp_path / "claims.db")
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grapharc.memory.claims import (
    MAX_CLAIM_BYTES,
    Claim,
    ClaimAlreadySupersededError,
    ClaimNotFoundError,
    ClaimStore,
    ClaimStoreClosedError,
    ClaimTooLargeError,
    DuplicateClaimError,
    InvalidClaimError,
    InvalidEntityError,
    InvalidSearchError,
    claim_sizes,
)
from grapharc.testing.claim_search_kit import ClaimSearchConformance
from grapharc.testing.claims import OBSERVED_AT, make_claim
from grapharc.testing.store_kit import race


class ClaimStoreConformance(ClaimSearchConformance):
    """The ``ClaimStore`` contract as pytest tests (storage here, search from
    ``ClaimSearchConformance``); subclass it and implement ``make_store``."""

    def test_store_satisfies_the_claim_store_protocol(self, store: ClaimStore) -> None:
        assert isinstance(store, ClaimStore)

    def test_added_claim_comes_back_equal_with_its_provenance(self, store: ClaimStore) -> None:
        claim = make_claim("Ada Lovelace", "the first program", run_id="run-7")
        assert store.add(claim) == claim
        fetched = store.get(claim.id)
        assert fetched == claim
        assert fetched.provenance.source == "conformance-kit"
        assert fetched.provenance.observed_at == OBSERVED_AT
        assert fetched.provenance.observed_at.utcoffset() is not None
        assert fetched.provenance.run_id == "run-7"
        assert fetched.superseded_by is None

    def test_claim_without_provenance_never_reaches_the_store(self, store: ClaimStore) -> None:
        with pytest.raises(InvalidClaimError, match="provenance"):
            Claim.model_validate({"subject": "Ada", "predicate": "wrote", "object": "notes"})
        assert store.all(include_superseded=True) == []

    def test_adding_a_taken_id_is_refused_and_keeps_the_original(
        self, store: ClaimStore
    ) -> None:
        original = store.add(make_claim("Ada", "notes", claim_id="c1"))
        with pytest.raises(DuplicateClaimError, match="c1"):
            store.add(make_claim("Ada", "something else", claim_id="c1"))
        assert store.get("c1") == original
        assert store.all(include_superseded=True) == [original]

    def test_adding_a_claim_marked_superseded_is_refused(self, store: ClaimStore) -> None:
        marked = make_claim("Ada", claim_id="c1").model_copy(update={"superseded_by": "c2"})
        with pytest.raises(ClaimAlreadySupersededError, match="c1"):
            store.add(marked)
        assert store.all(include_superseded=True) == []

    def test_a_claim_over_the_size_limit_is_refused_naming_its_size_and_the_limit(
        self, store: ClaimStore
    ) -> None:
        big = make_claim("Ada", "é" * (MAX_CLAIM_BYTES // 2), claim_id="big")  # two bytes a letter
        total = sum(claim_sizes(big).values())
        said = (rf"claim 'big' is {total:,} bytes of text \(object {MAX_CLAIM_BYTES:,}, .*\); "
                rf"a claim holds at most {MAX_CLAIM_BYTES:,} bytes")
        with pytest.raises(ClaimTooLargeError, match=said):
            store.add(big)
        kept = store.add(make_claim("Ada", "notes"))
        with pytest.raises(ClaimTooLargeError, match=said):
            store.add_many([make_claim("Bo", "fine"), big])
        with pytest.raises(ClaimTooLargeError, match=said):
            store.supersede(kept.id, big)
        assert store.all(include_superseded=True) == [kept]  # nothing of a refused write is kept

    def test_a_claim_of_exactly_the_size_limit_is_kept_whole(self, store: ClaimStore) -> None:
        short = make_claim("Ada", "y", claim_id="edge")
        room = MAX_CLAIM_BYTES - sum(claim_sizes(short).values()) + 1  # the "y" counted once already
        fitting = short.model_copy(update={"object": "y" * room})
        assert sum(claim_sizes(fitting).values()) == MAX_CLAIM_BYTES
        store.add(fitting)
        assert store.get("edge") == fitting

    def test_unknown_id_raises_not_found_naming_the_id(self, store: ClaimStore) -> None:
        with pytest.raises(ClaimNotFoundError, match="no-such-claim"):
            store.get("no-such-claim")
        with pytest.raises(ClaimNotFoundError, match="no-such-claim"):
            store.history("no-such-claim")

    def test_supersede_keeps_the_old_claim_and_links_it_to_the_new(
        self, store: ClaimStore
    ) -> None:
        old = store.add(make_claim("Tokyo", "8 million people", predicate="population"))
        new = make_claim("Tokyo", "14 million people", predicate="population")
        assert store.supersede(old.id, new) == new
        kept = store.get(old.id)
        assert kept.superseded_by == new.id
        assert kept.model_copy(update={"superseded_by": None}) == old
        assert store.get(new.id) == new
        assert store.all(include_superseded=True) == [kept, new]

    def test_superseding_an_unknown_claim_writes_nothing(self, store: ClaimStore) -> None:
        new = make_claim("Tokyo")
        with pytest.raises(ClaimNotFoundError, match="missing-id"):
            store.supersede("missing-id", new)
        assert store.all(include_superseded=True) == []

    def test_superseding_an_already_superseded_claim_is_refused(
        self, store: ClaimStore
    ) -> None:
        old = store.add(make_claim("Tokyo", "v1"))
        first = store.supersede(old.id, make_claim("Tokyo", "v2"))
        late = make_claim("Tokyo", "v3")
        with pytest.raises(ClaimAlreadySupersededError, match=old.id):
            store.supersede(old.id, late)
        with pytest.raises(ClaimNotFoundError):
            store.get(late.id)
        assert store.get(old.id).superseded_by == first.id
        assert store.about("Tokyo") == [first]

    def test_superseding_with_a_taken_id_writes_nothing(self, store: ClaimStore) -> None:
        old = store.add(make_claim("Tokyo", "v1"))
        other = store.add(make_claim("Kyoto", "v1"))
        with pytest.raises(DuplicateClaimError, match=other.id):
            store.supersede(old.id, make_claim("Tokyo", "v2", claim_id=other.id))
        assert store.get(old.id).superseded_by is None
        assert store.get(other.id) == other

    def test_history_is_the_whole_chain_oldest_first_from_any_member(
        self, store: ClaimStore
    ) -> None:
        first = store.add(make_claim("Tokyo", "v1"))
        second = store.supersede(first.id, make_claim("Tokyo", "v2"))
        third = store.supersede(second.id, make_claim("Tokyo", "v3"))
        store.add(make_claim("Tokyo", "unrelated"))
        for member in (first, second, third):
            assert [c.object for c in store.history(member.id)] == ["v1", "v2", "v3"]
        chain = store.history(third.id)
        assert [c.superseded_by for c in chain] == [second.id, third.id, None]

    def test_history_of_an_uncorrected_claim_is_just_that_claim(
        self, store: ClaimStore
    ) -> None:
        claim = store.add(make_claim("Tokyo"))
        assert store.history(claim.id) == [claim]

    def test_a_long_correction_chain_comes_back_whole(self, store: ClaimStore) -> None:
        head = store.add(make_claim("Counter", "0"))
        for value in range(1, 60):
            head = store.supersede(head.id, make_claim("Counter", str(value)))
        chain = store.history(head.id)
        assert [c.object for c in chain] == [str(v) for v in range(60)]
        assert store.about("counter") == [head]

    def test_about_returns_current_claims_only(self, store: ClaimStore) -> None:
        old = store.add(make_claim("Tokyo", "8 million", predicate="population"))
        governor = store.add(make_claim("Tokyo", "Koike", predicate="governor"))
        new = store.supersede(old.id, make_claim("Tokyo", "14 million", predicate="population"))
        assert store.about("Tokyo") == [governor, new]

    def test_about_with_a_limit_returns_the_oldest_current_claims(self, store: ClaimStore) -> None:
        old = store.add(make_claim("Tokyo", "8 million", predicate="population"))
        governor = store.add(make_claim("Tokyo", "Koike", predicate="governor"))
        new = store.supersede(old.id, make_claim("Tokyo", "14 million", predicate="population"))
        region = store.add(make_claim("Tokyo", "Kanto", predicate="region"))
        assert store.about("Tokyo", limit=2) == [governor, new]
        assert store.about("Tokyo", limit=9) == [governor, new, region]
        with pytest.raises(InvalidSearchError, match="limit=0"):
            store.about("Tokyo", limit=0)

    def test_about_matches_spelling_variants_of_a_subject(self, store: ClaimStore) -> None:
        claim = store.add(make_claim("New  York"))
        for variant in ("new york", "NEW YORK.", " “New York” ", "Ｎｅｗ Ｙｏｒｋ"):
            assert store.about(variant) == [claim]

    def test_subjects_in_other_scripts_stay_distinct(self, store: ClaimStore) -> None:
        tokyo = store.add(make_claim("東京", "首都"))
        beijing = store.add(make_claim("北京", "首都"))
        moscow = store.add(make_claim("Москва", "столица"))
        assert store.about("東京") == [tokyo]
        assert store.about("「北京」。") == [beijing]
        assert store.about("МОСКВА") == [moscow]
        assert store.about("Tokyo") == []

    def test_about_refuses_a_subject_with_no_entity_in_it(self, store: ClaimStore) -> None:
        store.add(make_claim("Tokyo"))
        with pytest.raises(InvalidEntityError, match=r"'\.\.\.'"):
            store.about("...")

    def test_all_lists_current_claims_in_insertion_order(self, store: ClaimStore) -> None:
        a = store.add(make_claim("A"))
        b = store.add(make_claim("B"))
        c = store.supersede(a.id, make_claim("A", "corrected"))
        assert store.all() == [b, c]
        assert [x.id for x in store.all(include_superseded=True)] == [a.id, b.id, c.id]

    def test_racing_corrections_of_one_claim_admit_exactly_one(
        self, store: ClaimStore
    ) -> None:
        old = store.add(make_claim("Tokyo", "v1"))
        contenders = [make_claim("Tokyo", f"v2-{n}") for n in range(8)]
        won, refused = race(len(contenders), lambda n: store.supersede(old.id, contenders[n]),
                            ClaimAlreadySupersededError)
        assert len(won) == 1
        assert len(refused) == len(contenders) - 1
        assert store.history(old.id) == [store.get(old.id), won[0]]
        assert len(store.all(include_superseded=True)) == 2

    def test_a_closed_store_refuses_use_and_closes_again_quietly(
        self, tmp_path: Path
    ) -> None:
        store = self.make_store(tmp_path)
        store.close()
        store.close()
        with pytest.raises(ClaimStoreClosedError):
            store.add(make_claim("Tokyo"))
        with pytest.raises(ClaimStoreClosedError):
            store.all()

    def test_claims_and_corrections_survive_close_and_reopen(self, tmp_path: Path) -> None:
        if not self.durable:
            pytest.skip("store under test declares durable = False")
        store = self.make_store(tmp_path)
        old = store.add(make_claim("東京", "v1", run_id="run-1"))
        new = store.supersede(old.id, make_claim("東京", "v2", run_id="run-2"))
        other = store.add(make_claim("北京", "v1"))
        before = store.all(include_superseded=True)
        store.close()
        reopened = self.reopen_store(tmp_path)
        try:
            assert reopened.all(include_superseded=True) == before
            assert reopened.about("東京") == [new]
            assert reopened.about("北京") == [other]
            assert [c.id for c in reopened.history(new.id)] == [old.id, new.id]
            assert reopened.get(old.id).provenance.run_id == "run-1"
            later = reopened.add(make_claim("東京", "v3"))
            assert reopened.about("東京") == [new, later]
            with pytest.raises(ClaimAlreadySupersededError):
                reopened.supersede(old.id, make_claim("東京", "v4"))
        finally:
            reopened.close()
