"""The in-process claim store keeps the ClaimStore contract and opens only as ``memory:``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grapharc.errors import ConfigurationError
from grapharc.memory.bm25f import exact_search
from grapharc.memory.inprocess import InMemoryClaimStore, open_inprocess_store
from grapharc.memory.term_index import TermIndex
from grapharc.testing.claim_store_kit import ClaimStoreConformance
from grapharc.testing.claims import make_claim, varied_claims


class TestInMemoryClaimStoreConformance(ClaimStoreConformance):
    """Runs the conformance kit against the dict-backed store (not durable)."""

    def make_store(self, tmp_path: Path) -> InMemoryClaimStore:
        return InMemoryClaimStore()


def test_memory_uri_without_location_opens_an_empty_store() -> None:
    store = open_inprocess_store("", "claims")
    assert isinstance(store, InMemoryClaimStore)
    assert store.all(include_superseded=True) == []


def test_memory_uri_with_a_location_is_refused_naming_the_uri() -> None:
    with pytest.raises(ConfigurationError, match=re.escape("'memory:/tmp/claims.db'")):
        open_inprocess_store("/tmp/claims.db", "claims")


def test_memory_uri_for_another_store_kind_is_refused_naming_the_kind() -> None:
    with pytest.raises(ConfigurationError, match="'artifacts'"):
        open_inprocess_store("", "artifacts")


def test_each_open_gives_an_independent_store() -> None:
    first = open_inprocess_store("", "claims")
    second = open_inprocess_store("", "claims")
    first.add(make_claim("Tokyo"))
    assert second.all() == []


def test_an_index_built_a_batch_at_a_time_ranks_as_one_built_a_claim_at_a_time() -> None:
    claims = varied_claims(400)
    batched, single = TermIndex(), TermIndex()
    for start in range(0, len(claims), 37):
        batched.add_many(claims[start:start + 37])
    for claim in claims:
        single.add(claim)
    for query in ("Kyoto located", "language compiler", "Ada", claims[-1].object):
        expected = exact_search(claims, query, k=15)
        assert batched.search(query, 15, False) == single.search(query, 15, False) == expected
