"""render_context: one line per claim with provenance, within an estimated token budget."""

from __future__ import annotations

import pytest

from grapharc.memory.claims import InvalidSearchError
from grapharc.memory.context import estimate_tokens, render_context
from grapharc.memory.inprocess import InMemoryClaimStore
from grapharc.memory.retrieval import retrieve
from grapharc.testing.claims import make_claim


def test_tokens_are_estimated_high_for_non_latin_text() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("東京") == 2


def test_a_line_carries_the_fact_its_provenance_and_its_successor() -> None:
    store = InMemoryClaimStore()
    old = store.add(make_claim("Tokyo", "8 million", predicate="population", run_id="run-1"))
    new = store.supersede(old.id, make_claim("Tokyo", "14 million", predicate="population"))
    text = render_context(store.all(include_superseded=True), max_tokens=500)
    assert text.splitlines() == [
        "- Tokyo | population | 8 million (source: conformance-kit; "
        f"observed 2024-05-01T12:30:15+00:00; run run-1; superseded by {new.id})",
        "- Tokyo | population | 14 million (source: conformance-kit; "
        "observed 2024-05-01T12:30:15+00:00)",
    ]


def test_the_budget_bounds_what_is_rendered_in_rank_order() -> None:
    store = InMemoryClaimStore()
    store.add_many([make_claim("Tokyo", f"fact number {n}", predicate="has") for n in range(30)])
    hits = retrieve(store, "Tokyo", k=30, hops=0)
    one_line = estimate_tokens(render_context(hits[:1], max_tokens=500) + "\n")
    text = render_context(hits, max_tokens=one_line * 3 + one_line // 2)
    assert len(text.splitlines()) == 3
    assert estimate_tokens(text + "\n") <= one_line * 3 + one_line // 2
    assert text == render_context(hits[:3], max_tokens=500)


def test_a_line_too_long_for_the_rest_of_the_budget_is_skipped_not_cut() -> None:
    long = make_claim("Tokyo", "a very long description " * 20)
    short = make_claim("Kyoto", "old capital")
    text = render_context([long, short], max_tokens=60)
    assert text.startswith("- Kyoto | has | old capital")
    assert "very long" not in text
    assert render_context([long], max_tokens=5) == ""


def test_a_budget_below_one_token_is_refused() -> None:
    with pytest.raises(InvalidSearchError, match="max_tokens=0"):
        render_context([], max_tokens=0)
