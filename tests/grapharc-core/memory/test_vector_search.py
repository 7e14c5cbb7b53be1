"""``vector_search.nearest`` through a ``VectorIndex`` ranks exactly as comparing every vector does."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Callable, Mapping

import pytest

from grapharc.memory.longterm.contracts import InvalidItemSearchError
from grapharc.memory.longterm.vector_index import VectorIndex
from grapharc.memory.longterm.vector_search import nearest
from grapharc.memory.longterm.vectors import Vector, every_similar, fuse, packed

Corpus = dict[int, tuple[tuple[str, ...], Vector]]


def exhaustive(
    corpus: Corpus,
    wanted: Vector,
    lexical: list[tuple[float, int]],
    prefix: tuple[str, ...],
    admitted: Callable[[int], bool],
    k: int,
    floor: float,
) -> list[tuple[float, int]]:
    """The fused ranking with every in-scope vector compared: the channel's definition."""
    in_scope = (
        (key, vector)
        for key, (namespace, vector) in corpus.items()
        if namespace[: len(prefix)] == prefix and admitted(key)
    )
    return fuse(lexical, every_similar(wanted, in_scope, floor), k)


def indexed(
    corpus: Corpus,
    wanted: Vector,
    lexical: list[tuple[float, int]],
    prefix: tuple[str, ...],
    admitted: Callable[[int], bool],
    k: int,
    floor: float,
    index: VectorIndex,
) -> list[tuple[float, int]]:
    def admit(keys: list[int]) -> Mapping[int, Vector]:  # as a store's scope: prefix and the rest
        return {
            key: corpus[key][1]
            for key in keys
            if key in corpus and corpus[key][0][: len(prefix)] == prefix and admitted(key)
        }

    return fuse(lexical, nearest(wanted, index, prefix, [key for _, key in lexical], k, floor, admit), k)


def random_corpus(chooser: random.Random, count: int, vector: Callable[[], Vector]) -> Corpus:
    return {key: (("n", f"s{chooser.randrange(3)}"), vector()) for key in range(count)}


@pytest.mark.parametrize("seed", range(12))
def test_the_index_ranks_exactly_as_comparing_every_vector(seed: int) -> None:
    chooser = random.Random(seed)
    dimensions = chooser.choice([3, 8, 16, 64])
    if seed % 2:  # small integer counts, as the hashing embedder makes: many exact ties

        def vector() -> Vector:
            return [float(chooser.randint(-2, 2)) for _ in range(dimensions)]
    else:

        def vector() -> Vector:
            return [chooser.gauss(0.0, 1.0) for _ in range(dimensions)]

    corpus = random_corpus(chooser, 600, vector)
    index = VectorIndex()
    halves = list(corpus.items())
    index.load((key, namespace, packed(kept) or b"") for key, (namespace, kept) in halves[:300])
    for key, (namespace, kept) in halves[300:]:
        index.add(key, namespace, kept)
    for key in chooser.sample(sorted(corpus), 200):  # removed, and compacted once half are gone
        index.discard(key)
        del corpus[key]
    for _ in range(10):
        wanted, k = vector(), chooser.randint(1, 25)
        floor = chooser.choice([-1.0, 0.0, 0.3, 0.6])
        prefix = chooser.choice([("n",), ("n", "s1"), ()])
        refused = set(chooser.sample(sorted(corpus), 50))
        lexical = sorted(
            ((chooser.uniform(0.1, 5.0), key) for key in chooser.sample(sorted(corpus), 5)),
            key=lambda pair: (-pair[0], pair[1]),
        )

        def admitted(key: int, refused: set[int] = refused) -> bool:
            return key not in refused

        assert indexed(corpus, wanted, lexical, prefix, admitted, k, floor, index) == exhaustive(
            corpus, wanted, lexical, prefix, admitted, k, floor
        )


def test_vectors_closer_than_float32_can_tell_are_ranked_by_their_exact_similarity() -> None:
    chooser = random.Random(7)
    base = [chooser.gauss(0.0, 1.0) for _ in range(32)]
    corpus = {key: (("n",), [x * (1.0 + chooser.uniform(-1e-7, 1e-7)) for x in base]) for key in range(300)}
    index = VectorIndex()
    for key, (namespace, kept) in corpus.items():
        index.add(key, namespace, kept)
    for k in (1, 5, 20):
        assert indexed(corpus, base, [], ("n",), lambda key: True, k, 0.3, index) == exhaustive(
            corpus, base, [], ("n",), lambda key: True, k, 0.3
        )


def test_many_items_tied_at_the_cut_come_oldest_first() -> None:
    corpus = {key: (("n",), [1.0, float(key % 2), 0.0]) for key in range(400)}
    index = VectorIndex()
    for key, (namespace, kept) in corpus.items():
        index.add(key, namespace, kept)
    found = indexed(corpus, [1.0, 1.0, 0.0], [], ("n",), lambda key: True, 7, 0.3, index)
    assert [key for _, key in found] == [1, 3, 5, 7, 9, 11, 13]
    assert found == exhaustive(corpus, [1.0, 1.0, 0.0], [], ("n",), lambda key: True, 7, 0.3)


def test_an_in_scope_vector_of_another_dimension_is_refused_and_one_out_of_scope_is_not() -> None:
    corpus: Corpus = {0: (("a",), [1.0, 0.0]), 1: (("b",), [1.0, 0.0, 0.0])}
    index = VectorIndex()
    for key, (namespace, kept) in corpus.items():
        index.add(key, namespace, kept)
    assert indexed(corpus, [1.0, 0.0], [], ("a",), lambda key: True, 3, 0.3, index) == [(1.0, 0)]
    with pytest.raises(InvalidItemSearchError, match="2 and 3 dimensions"):
        indexed(corpus, [1.0, 0.0], [], (), lambda key: True, 3, 0.3, index)
    assert indexed(corpus, [1.0, 0.0], [], (), lambda key: key != 1, 3, 0.3, index) == [(1.0, 0)]


def test_numpy_is_imported_only_once_a_vector_is_kept() -> None:
    probe = (
        "import sys\n"
        "from grapharc.memory.hashing_embedder import HashingEmbedder\n"
        "from grapharc.memory.longterm import InMemoryItemStore\n"
        "import grapharc.memory.longterm.vector_search\n"
        "store = InMemoryItemStore(embedder=HashingEmbedder(8))\n"
        "store.put(('n',), 'k', {'text': 'x'}, index=False)\n"
        "before = 'numpy' in sys.modules\n"
        "store.put(('n',), 'k', {'text': 'x'})\n"
        "print(before, 'numpy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
