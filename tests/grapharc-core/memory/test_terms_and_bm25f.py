"""Terms are split alike for every store, and BM25F scores what its module docstring says."""

from __future__ import annotations

import math

import pytest

from grapharc.memory import impact_walk
from grapharc.memory.bm25f import (
    IDF_FLOOR,
    K1,
    B,
    exact_search,
    weighted_frequencies,
    weighted_frequencies_of,
)
from grapharc.memory.claims import InvalidSearchError
from grapharc.memory.inprocess import InMemoryClaimStore
from grapharc.memory.terms import query_terms, terms
from grapharc.testing.claims import make_claim, varied_claims


def test_terms_fold_case_width_and_punctuation() -> None:
    assert terms("Tokyo's POPULATION: 14,000,000 (ＡＢＣ)") == [
        "tokyo", "s", "population", "14", "000", "000", "abc"]
    assert terms("Straße café") == ["strasse", "café"]


def test_ideographs_and_kana_are_one_term_per_character() -> None:
    assert terms("東京都のカフェ") == ["東", "京", "都", "の", "カ", "フ", "ェ"]


def test_words_with_combining_marks_stay_whole() -> None:
    assert terms("नई दिल्ली") == ["नई", "दिल्ली"]


def test_a_query_counts_each_term_once_in_first_seen_order() -> None:
    assert query_terms("tokyo Tokyo population tokyo") == ["tokyo", "population"]
    assert query_terms("?! ...") == []


def test_a_batch_is_weighed_as_each_claim_alone_however_its_texts_repeat() -> None:
    claims = [*varied_claims(80), make_claim("東京", "東京 東京", predicate="東京")]
    assert weighted_frequencies_of(claims) == [weighted_frequencies(claim) for claim in claims]


def test_the_score_is_the_documented_formula() -> None:
    claims = [make_claim("Ada", "engine notes", predicate="wrote"),
              make_claim("Babbage", "engine", predicate="built"),
              make_claim("Hopper", "compiler", predicate="wrote"),
              make_claim("Turing", "machine", predicate="imagined")]
    [(found, score)] = exact_search(claims, "notes")
    lengths = [4, 3, 3, 3]
    average = sum(lengths) / len(lengths)
    idf = math.log((4 - 1 + 0.5) / (1 + 0.5))
    frequency = 1.5  # one occurrence in the object
    expected = idf * frequency * (K1 + 1) / (frequency + K1 * (1 - B + B * 4 / average))
    assert found == claims[0]
    assert score == pytest.approx(expected, rel=1e-12)


def test_a_term_in_half_the_claims_or_more_scores_the_idf_floor() -> None:
    claims = [make_claim("Ada", "engine"), make_claim("Babbage", "engine")]
    [(_, first), (_, second)] = exact_search(claims, "engine")
    assert 0 < first <= IDF_FLOOR * (K1 + 1)
    assert first == pytest.approx(second)


def test_the_subject_outweighs_the_object_which_outweighs_the_predicate() -> None:
    store = InMemoryClaimStore()
    in_predicate = store.add(make_claim("Kyoto", "temple", predicate="river"))
    in_object = store.add(make_claim("Osaka", "river", predicate="near"))
    in_subject = store.add(make_claim("River", "long", predicate="is"))
    store.add_many([make_claim(f"Town {n}", "quiet") for n in range(5)])
    ranked = [hit.claim for hit in store.search("river")]
    assert ranked == [in_subject, in_object, in_predicate]


def test_corpus_statistics_include_superseded_claims() -> None:
    store = InMemoryClaimStore()
    old = store.add(make_claim("Tokyo", "8 million", predicate="population"))
    store.add_many([make_claim(f"City {n}", "small") for n in range(6)])
    before = store.search("Tokyo", include_superseded=True)[0].score
    new = store.supersede(old.id, make_claim("Tokyo", "14 million", predicate="population"))
    [(found, after)] = store.search("Tokyo")
    assert found == new
    assert after != before
    assert exact_search(store.all(include_superseded=True), "Tokyo")[0].score == after


def test_asking_for_no_results_is_refused() -> None:
    with pytest.raises(InvalidSearchError, match="k=0"):
        exact_search([make_claim("Ada")], "Ada", k=0)


def test_the_in_process_index_scores_only_claims_sharing_a_query_term(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = InMemoryClaimStore()
    store.add_many([make_claim(f"Town {n}", "quiet streets") for n in range(2_000)])
    wanted = store.add_many([make_claim("Tokyo", "busy"), make_claim("Kyoto", "Tokyo's rival")])
    scored = count_scored_claims(monkeypatch)
    assert [hit.claim for hit in store.search("Tokyo")] == wanted
    assert len(scored) == 2


@pytest.mark.parametrize("query", ["streets", "streets Tokyo", "busy Town"])
def test_a_common_term_costs_the_same_however_many_claims_hold_it(
    monkeypatch: pytest.MonkeyPatch, query: str,
) -> None:
    calls = []
    for towns in (200, 2_000):
        store = InMemoryClaimStore()
        store.add_many([make_claim(f"Town {n}", "quiet streets") for n in range(towns)])
        store.add(make_claim("Tokyo", "busy streets"))
        everything = store.all(include_superseded=True)
        scored = count_scored_claims(monkeypatch)
        for k in (1, 3):
            assert store.search(query, k=k) == exact_search(everything, query, k=k)
        calls.append(len(scored))
    assert calls[0] == calls[1]


def test_the_index_returns_the_scans_top_k_in_the_scans_order_with_corrections() -> None:
    store = InMemoryClaimStore()
    claims = store.add_many(varied_claims(600))
    for old in claims[::7]:
        store.supersede(old.id, make_claim(old.subject, "corrected engine", predicate=old.predicate))
    everything = store.all(include_superseded=True)
    for query in ("engine", "Tokyo", "Ada Lovelace notes", "東京 city", "worked with Babbage",
                  "engine program million city island", "corrected"):
        for k in (1, 4, 25, 900):
            for include_superseded in (False, True):
                assert store.search(query, k, include_superseded) == exact_search(
                    everything, query, k, include_superseded)


def count_scored_claims(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the length of every claim, or group of claims, the index scores a term for."""
    lengths: list[int] = []
    original = impact_walk.term_score

    def counting(term_idf: float, frequency: float, length: int, average: float) -> float:
        if length:
            lengths.append(length)
        return original(term_idf, frequency, length, average)

    monkeypatch.setattr(impact_walk, "term_score", counting)
    return lengths
