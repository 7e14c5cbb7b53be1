"""retrieve: BM25F seeds, a vector channel silent below its floor, and a decaying entity walk."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from grapharc.memory.claim_index import ClaimIndex
from grapharc.memory.claims import Claim, InvalidSearchError, ScoredClaim
from grapharc.memory.inprocess import InMemoryClaimStore
from grapharc.memory.retrieval import Embedder, retrieve
from grapharc.testing.claims import make_claim

AXES = (("car", "automobile", "vehicle"), ("fruit", "apple", "banana"), ("city", "tokyo"))


class ConceptEmbedder:
    """Embeds text as counts of concept words per axis, so similarities are known in advance."""

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        return [[float(sum(word in text.lower() for word in axis)) for axis in AXES]
                for text in texts]


@pytest.fixture
def store() -> InMemoryClaimStore:
    return InMemoryClaimStore()


def test_the_vector_channel_finds_a_claim_sharing_no_term_with_the_query(
    store: InMemoryClaimStore,
) -> None:
    model_t = store.add(make_claim("Model T", "car", predicate="is a"))
    store.add(make_claim("Cavendish", "banana", predicate="is a"))
    embedder = ConceptEmbedder()
    assert isinstance(embedder, Embedder)
    assert retrieve(store, "automobile", hops=0) == []
    [hit] = retrieve(store, "automobile", embedder=embedder, hops=0)
    assert (hit.claim, hit.channels, hit.score) == (model_t, ("vector",), pytest.approx(1.0))
    assert embedder.calls == 1


def test_the_vector_channel_stays_silent_below_its_floor(store: InMemoryClaimStore) -> None:
    store.add(make_claim("Cavendish", "banana", predicate="is a"))
    store.add(make_claim("Shibuya", "Tokyo city", predicate="ward of"))
    assert retrieve(store, "vehicle", embedder=ConceptEmbedder(), hops=0) == []


def test_a_claim_both_channels_find_adds_the_two_scores(store: InMemoryClaimStore) -> None:
    tokyo = store.add(make_claim("Tokyo", "city", predicate="is a"))
    store.add_many([make_claim(f"Town {n}", "quiet") for n in range(4)])
    [hit] = retrieve(store, "tokyo", embedder=ConceptEmbedder(), hops=0)
    assert hit.claim == tokyo
    assert hit.channels == ("bm25f", "vector")
    assert hit.score == pytest.approx(2.0)


def test_an_embedder_that_returns_too_few_vectors_is_refused(store: InMemoryClaimStore) -> None:
    class Short:
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return [[1.0]]

    store.add(make_claim("Tokyo"))
    with pytest.raises(InvalidSearchError, match="1 vectors for 2 texts"):
        retrieve(store, "tokyo", embedder=Short())


def test_each_hop_decays_and_a_cycle_ends(store: InMemoryClaimStore) -> None:
    there = store.add(make_claim("Ada", "Babbage", predicate="wrote to"))
    back = store.add(make_claim("Babbage", "Ada", predicate="replied to"))
    hits = retrieve(store, "wrote", k=5, hops=6, decay=0.4)
    assert [(hit.claim, hit.score, hit.hops) for hit in hits] == [
        (there, pytest.approx(1.0), 0), (back, pytest.approx(0.4), 1)]


def test_the_walk_keeps_the_best_path_to_a_claim(store: InMemoryClaimStore) -> None:
    ada = store.add(make_claim("Ada Lovelace", "Babbage", predicate="corresponded with"))
    engine = store.add(make_claim("Babbage", "Difference Engine", predicate="built"))
    hits = retrieve(store, "Ada Lovelace", hops=3, decay=0.5)
    assert [(hit.claim, hit.score, hit.via) for hit in hits] == [
        (ada, pytest.approx(1.0), None), (engine, pytest.approx(0.5), ada.id)]


def test_a_claim_index_retrieves_what_the_store_retrieves(store: InMemoryClaimStore) -> None:
    store.add(make_claim("Ada Lovelace", "Babbage", predicate="worked with"))
    store.add(make_claim("Babbage", "Analytical Engine", predicate="designed"))
    old = store.add(make_claim("Ada Lovelace", "1816", predicate="born"))
    store.supersede(old.id, make_claim("Ada Lovelace", "1815", predicate="born"))
    index = ClaimIndex.of(store)
    assert retrieve(index, "Ada Lovelace born", hops=2) == retrieve(store, "Ada Lovelace born",
                                                                    hops=2)
    assert index.about("ada lovelace") == store.about("Ada Lovelace")


@pytest.mark.parametrize(("arguments", "named"), [
    ({"k": 0}, "k=0"), ({"hops": -1}, "hops=-1"), ({"decay": 1.0}, "decay=1.0"),
    ({"similarity_floor": 1.5}, "similarity_floor=1.5")])
def test_impossible_settings_are_refused_naming_them(
    store: InMemoryClaimStore, arguments: dict[str, float], named: str
) -> None:
    with pytest.raises(InvalidSearchError, match=named):
        retrieve(store, "Ada", **arguments)  # type: ignore[arg-type]


class EveryNeighbour:
    """A store whose ``about`` ignores the limit and counts the claims it hands out: the walk
    over it reads every neighbour, as it did before it took only k."""

    def __init__(self, store: InMemoryClaimStore, honour_limit: bool = False) -> None:
        self.store = store
        self.honour_limit = honour_limit
        self.read: list[int] = []

    def search(self, query: str, k: int = 10,
               include_superseded: bool = False) -> list[ScoredClaim]:
        return self.store.search(query, k, include_superseded)

    def about(self, subject: str, limit: int | None = None) -> list[Claim]:
        found = self.store.about(subject, limit if self.honour_limit else None)
        self.read.append(len(found))
        return found

    def all(self, include_superseded: bool = False) -> list[Claim]:
        return self.store.all(include_superseded)


def test_the_walk_reads_only_k_claims_about_each_entity(store: InMemoryClaimStore) -> None:
    store.add(make_claim("Ada Lovelace", "Babbage", predicate="worked with"))
    store.add_many([make_claim("Babbage", f"note {n}", predicate="wrote") for n in range(300)])
    counted = EveryNeighbour(store, honour_limit=True)
    assert retrieve(counted, "Ada Lovelace", k=4) == retrieve(EveryNeighbour(store), "Ada Lovelace",
                                                              k=4)
    assert counted.read == [4]


def test_a_claim_found_earlier_is_raised_even_past_the_first_k(
    store: InMemoryClaimStore,
) -> None:
    store.add(make_claim("Ada Lovelace", "Babbage", predicate="worked with"))
    store.add_many([make_claim("Babbage", f"note {n}", predicate="wrote") for n in range(6)])
    late = store.add(make_claim("Babbage", "Lovelace letters", predicate="kept"))
    hits = retrieve(store, "Ada Lovelace", k=3)
    assert hits == retrieve(EveryNeighbour(store), "Ada Lovelace", k=3)
    assert late in [hit.claim for hit in hits]


@pytest.mark.parametrize("seed", range(4))
def test_the_walk_returns_what_reading_every_neighbour_returns(seed: int) -> None:
    rng = random.Random(seed)
    store = InMemoryClaimStore()
    people = [f"Person {n}" for n in range(12)]
    for _ in range(400):
        subject = rng.choice(people[:4] if rng.random() < 0.6 else people)
        obj = rng.choice(people) if rng.random() < 0.5 else f"topic {rng.randint(0, 30)}"
        store.add(make_claim(subject, obj, predicate=rng.choice(("knows", "wrote", "met"))))
    for query in ("Person 1", "topic 3 knows", "wrote Person 7", "met topic 12", "Person"):
        for k in (1, 3, 10):
            for hops in (1, 2):
                assert retrieve(store, query, k=k, hops=hops) == retrieve(
                    EveryNeighbour(store), query, k=k, hops=hops)
