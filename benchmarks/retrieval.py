"""Claim search: the stores' indexes against the exact O(claims) BM25F scan, in one run.

Two synthetic corpora of made-up words, each at 1k / 10k / 100k claims:
- ``uniform``: a fixed vocabulary of 6,000 words, each equally likely, so every
  word's postings grow in step with the corpus (at 100k claims a subject word is
  in ~80 claims and a predicate word in ~2,500). A worst case for an index, and
  not how text behaves.
- ``zipf``: word frequencies follow Zipf's law (the r-th commonest word is 1/r as
  likely as the first) over a vocabulary that grows with the corpus as Heaps'
  law has it (about 30 * sqrt(words)), and entities are named and mentioned
  with Zipfian popularity: a few very common words and entities, a long tail of
  rare ones, as in real notes.
In both, subjects are two-word names (one entity per four claims), there are 40
predicates, and objects are one to four words, a third of them naming another
entity so entity links exist. Queries mix a subject with a predicate word, an
object word alone, and a subject alone. Measured per corpus and size:
- query latency (median and 95th percentile, ms) of ``search(query, k=10)`` on the
  in-process store (inverted index), the SQLite store (impact-ordered postings in the
  claims file, written as append-only runs merged LSM-style) and the LadybugDB store
  (the in-process index, rebuilt when the database is opened), all three walking their
  postings with ``impact_walk``, against the exact scan (``ClaimIndex``, each claim's
  term frequencies precomputed, so only the per-query O(claims) work is timed), and how
  each median grows per 10x claims;
- ``retrieve(store, query, k=10)`` (search, then one hop along entity links),
  median ms per store;
- recall@10 of each index against the scan; a tie on the 10th score counts as a
  hit, since either claim is a correct answer;
- insert cost per claim: ``add_many`` in batches of 1,000 (one transaction each on
  SQLite, a file in WAL mode with ``synchronous=FULL``, which also writes the batch's
  postings and merges runs when due; one ``UNWIND`` statement on LadybugDB), with the
  objects alive before a fill frozen out of the garbage collector (``gc.freeze``);
- reopening the LadybugDB store (the seconds its index rebuild costs).
Every fill must add every claim (the last one readable by id, after the reopen too), and every
query must find at least one claim in every store, in the scan and through ``retrieve`` (each
query is drawn from a claim); otherwise the script exits 1 and prints no figure.
Run time stays under three minutes on an idle machine; ``--quick`` stops at 10k claims.

    .venv/bin/python benchmarks/retrieval.py [--quick] [--corpus uniform|zipf] [--json]
"""

from __future__ import annotations

import gc
import itertools
import json
import math
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _arguments import benchmark_parser
from _checked import checked_main, expect, expect_equal

from grapharc.memory import (
    ClaimIndex,
    InMemoryClaimStore,
    LadybugMemoryStore,
    SQLiteMemoryStore,
    retrieve,
)
from grapharc.memory.claims import Claim, ClaimStore, Provenance, ScoredClaim

SIZES = (1_000, 10_000, 100_000)
QUERIES = 60
SCAN_QUERIES = {1_000: 60, 10_000: 30, 100_000: 8}
BATCH = 1_000
STORES = ("memory", "sqlite", "ladybug")
CORPORA = ("uniform", "zipf")
K = 10
SYLLABLES = ("ka", "lo", "mi", "ra", "tu", "ven", "do", "shi", "par", "el", "no", "qui", "zor",
             "ba", "fen", "gri", "hol", "jas", "wek", "yun")


def vocabulary(rng: random.Random, size: int, longest: int) -> list[str]:
    """``size`` distinct made-up words of two to ``longest`` syllables, sorted."""
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choices(SYLLABLES, k=rng.randint(2, longest))))
    return sorted(words)


def zipf_weights(size: int) -> list[float]:
    """Cumulative Zipf weights (exponent 1) for ``size`` ranks, for ``random.choices``."""
    return list(itertools.accumulate(1.0 / rank for rank in range(1, size + 1)))


class Draw:
    """Picks words and entities: uniformly, or with Zipfian popularity (rank = list order)."""

    def __init__(self, rng: random.Random, kind: str, count: int) -> None:
        self.rng = rng
        if kind == "uniform":
            self.words = vocabulary(rng, 6_000, 3)
            self.word_weights: list[float] | None = None
        else:
            self.words = vocabulary(rng, int(30 * math.sqrt(count * 6)), 4)
            rng.shuffle(self.words)
            self.word_weights = zipf_weights(len(self.words))
        self.entities = [f"{self.name_word()} {self.name_word()}" for _ in range(max(count // 4, 1))]
        self.entity_weights = None if kind == "uniform" else zipf_weights(len(self.entities))

    def name_word(self) -> str:
        if self.word_weights is None:
            return self.rng.choice(self.words).title()
        return self.words_of(1)[0].title()

    def words_of(self, count: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.word_weights, k=count)

    def entity(self) -> str:
        if self.entity_weights is None:
            return self.rng.choice(self.entities)
        return self.rng.choices(self.entities, cum_weights=self.entity_weights)[0]


def corpus(count: int, kind: str = "uniform", seed: int = 7) -> tuple[list[Claim], list[str]]:
    """``count`` claims of the ``kind`` corpus and the queries to ask of them."""
    rng = random.Random(seed)
    draw = Draw(rng, kind, count)
    predicates = [" ".join(rng.sample(draw.words[:300], rng.randint(1, 2))) for _ in range(40)]
    provenance = Provenance(source="benchmark", observed_at=datetime(2026, 1, 1, tzinfo=UTC))
    claims = []
    for n in range(count):
        linked = rng.random() < 0.33
        obj = draw.entity() if linked else " ".join(draw.words_of(rng.randint(1, 4)))
        claims.append(Claim(id=f"c{n:07d}", subject=draw.entity(),
                            predicate=rng.choice(predicates), object=obj, provenance=provenance))
    queries = []
    for n in range(QUERIES):
        claim = rng.choice(claims)
        queries.append([f"{claim.subject} {claim.predicate.split()[0]}", claim.object.split()[-1],
                        claim.subject][n % 3])
    return claims, queries


def timed(function: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds ``function`` took, and what it returned."""
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def fill(store: ClaimStore, claims: Sequence[Claim]) -> float:
    """Add ``claims`` in batches; return microseconds per claim. What is alive before (the
    corpus, the stores filled earlier) is frozen out of the garbage collector meanwhile, so a
    full collection of this script's own heap (about 2 us per claim when one fell into a 100k
    fill) is not billed to the store; the store's own garbage is collected as usual."""
    gc.collect()
    gc.freeze()
    try:
        batches = [timed(lambda i=i: store.add_many(claims[i:i + BATCH]))
                   for i in range(0, len(claims), BATCH)]
    finally:
        gc.unfreeze()
    expect_equal(sum(len(added) for _, added in batches), len(claims), f"claims {type(store).__name__} added")
    holds(store, claims[-1])
    return sum(seconds for seconds, _ in batches) / len(claims) * 1e6


def holds(store: ClaimStore, claim: Claim) -> None:
    """``store`` gives ``claim`` back by its id."""
    expect_equal(store.get(claim.id).id, claim.id, f"the last claim read back from {type(store).__name__}")


def latencies(search: Callable[[str], list[Any]], queries: Sequence[str],
              where: str) -> tuple[list[float], list[list[Any]]]:
    """Milliseconds per query and the results; every query must find something."""
    times, results = [], []
    for query in queries:
        seconds, found = timed(lambda query=query: search(query))
        expect(found, f"{where}: the query {query!r} found nothing")
        times.append(seconds * 1e3)
        results.append(found)
    return times, results


def recall(found: list[ScoredClaim], exact: list[ScoredClaim]) -> float:
    """Share of the exact top-k the index found; a claim tied with the k-th score counts."""
    if not exact:
        return 1.0
    floor = exact[-1].score * (1 - 1e-9)
    exact_ids = {hit.claim.id for hit in exact}
    right = sum(1 for hit in found if hit.claim.id in exact_ids or hit.score >= floor)
    return min(right, len(exact)) / len(exact)


def summary(times: list[float]) -> dict[str, float]:
    """Median and 95th percentile of a list of milliseconds."""
    ordered = sorted(times)
    return {"median_ms": statistics.median(ordered),
            "p95_ms": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]}


def measure(kind: str, count: int, directory: Path) -> dict[str, Any]:
    """Every figure for one corpus at one size."""
    claims, queries = corpus(count, kind)
    scan_queries = queries[:SCAN_QUERIES[count]]
    ladybug_path = directory / f"{kind}-{count}.lbug"
    stores: dict[str, ClaimStore] = {"memory": InMemoryClaimStore(),
                                     "sqlite": SQLiteMemoryStore(directory / f"{kind}-{count}.db"),
                                     "ladybug": LadybugMemoryStore(ladybug_path)}
    try:
        row: dict[str, Any] = {"corpus": kind, "claims": count, "queries": len(queries),
                               "scan_queries": len(scan_queries),
                               "insert_us": {name: fill(store, claims)
                                             for name, store in stores.items()}}
        stores["ladybug"].close()
        row["ladybug_reopen_s"], stores["ladybug"] = timed(lambda: LadybugMemoryStore(ladybug_path))
        holds(stores["ladybug"], claims[-1])
        index = ClaimIndex(claims)
        scan_times, exact = latencies(lambda q: index.search(q, k=K), scan_queries, f"{kind} {count}, scan")
        row["scan"] = summary(scan_times)
        for name, store in stores.items():
            where = f"{kind} {count}, {name}"
            times, found = latencies(lambda q, store=store: store.search(q, k=K), queries, where)
            recalls = [recall(f, e) for f, e in zip(found, exact, strict=False)]
            walks, _ = latencies(lambda q, store=store: retrieve(store, q, k=K), queries, f"{where} retrieve")
            row[name] = {**summary(times), "recall_at_10": statistics.mean(recalls),
                         "retrieve_median_ms": statistics.median(walks)}
        return row
    finally:
        for store in stores.values():
            store.close()


def growth(rows: list[dict[str, Any]]) -> dict[str, dict[str, list[float]]]:
    """Per corpus and store (and the scan), each median over the one at a tenth the claims."""
    ratios: dict[str, dict[str, list[float]]] = {}
    for kind in dict.fromkeys(row["corpus"] for row in rows):
        ordered = [row for row in rows if row["corpus"] == kind]
        ratios[kind] = {name: [later[name]["median_ms"] / earlier[name]["median_ms"]
                               for earlier, later in itertools.pairwise(ordered)]
                        for name in ("scan", *STORES)}
    return ratios


def table(rows: list[dict[str, Any]]) -> str:
    """The results as fixed-width tables, one per corpus, with the growth per 10x claims."""
    lines = []
    for kind, ratios in growth(rows).items():
        lines += [f"corpus: {kind}",
                  f"{'claims':>8} {'store':>7} {'median ms':>10} {'p95 ms':>8} {'recall@10':>9} "
                  f"{'insert us/claim':>15} {'retrieve ms':>11}"]
        ordered = [row for row in rows if row["corpus"] == kind]
        for row in ordered:
            lines.append(f"{row['claims']:>8} {'scan':>7} {row['scan']['median_ms']:>10.2f} "
                         f"{row['scan']['p95_ms']:>8.2f} {'1.000':>9} {'-':>15} {'-':>11}")
            for name in STORES:
                figures = row[name]
                lines.append(f"{row['claims']:>8} {name:>7} {figures['median_ms']:>10.2f} "
                             f"{figures['p95_ms']:>8.2f} {figures['recall_at_10']:>9.3f} "
                             f"{row['insert_us'][name]:>15.1f} "
                             f"{figures['retrieve_median_ms']:>11.2f}")
        lines.append("median growth per 10x claims: " + "; ".join(
            f"{name} {', '.join(f'{ratio:.1f}x' for ratio in found)}"
            for name, found in ratios.items()))
        lines.append("ladybug reopen (index rebuild): " + ", ".join(
            f"{row['ladybug_reopen_s']:.2f} s at {row['claims']}" for row in ordered))
        lines.append("")
    return "\n".join(lines).rstrip()


def main(argv: Sequence[str] | None = None) -> int:
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="stop at 10k claims")
    parser.add_argument("--corpus", choices=CORPORA, help="only this corpus (default: both)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    arguments = parser.parse_args(argv)
    sizes = SIZES[:2] if arguments.quick else SIZES
    kinds = (arguments.corpus,) if arguments.corpus else CORPORA
    with tempfile.TemporaryDirectory() as directory:
        rows = []
        for kind in kinds:
            for count in sizes:
                rows.append(measure(kind, count, Path(directory)))
                print(f"measured {count} {kind} claims", file=sys.stderr)
    print(json.dumps({"rows": rows, "growth_per_10x": growth(rows)}, indent=2)
          if arguments.json else table(rows))
    return 0


if __name__ == "__main__":
    checked_main(main)
