"""Long-term store search with the vector channel, in each store, against a brute-force baseline.

The corpus and queries of ``store_search.py`` (items under ``("users", "u0")`` ..
``("users", "u99")``, 4 to 14 Zipfian made-up words each, at 10k and 100k items), the
stores opened with an embedder (``--embedder``, default ``hashing:256``), so every
``search(("users",), query=..., limit=10)`` fuses BM25 with the vector channel. Measured per
store and size, through ``GraphARCStore``: p50 and p95 wall milliseconds and the median CPU
milliseconds of the process per search, after one untimed first search whose wall time is
reported apart (it loads the SQL stores' vector index: every vector, read once).

The baseline is the channel as it was before the index: the BM25 channel of a plain
in-process store (no embedder) holding the same items, fused with every item's vector
compared with the query's in Python (``vectors.every_similar``, the channel's definition;
the items' vectors are made before timing). Each store's ten (key, score) pairs must be the
baseline's exactly, scores to the last bit and ties in the same order, and every fill must
hold every item; otherwise the script exits 1 and prints no figure. ``--quick`` measures 1k
items only. ``--postgres URI`` measures grapharc-postgres's item store too, on a scratch database
per size. The aim is the memory plane's: at most 10 ms p95 at 100k items.

    .venv/bin/python benchmarks/store_vector_search.py [--quick] [--json] [--embedder SPEC] [--postgres URI]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _arguments import EmbedderSpec, PostgresConninfo, benchmark_parser
from _checked import checked_main, expect_equal
from store_search import QUICK_SIZES, Item, corpus, fill, latencies, scratch_database, stores_measured

from grapharc.memory.embedders import open_embedder
from grapharc.memory.longterm import GraphARCStore, InMemoryItemStore
from grapharc.memory.longterm.vectors import every_similar, fuse, item_vector, query_vector
from grapharc.memory.retrieval import Embedder
from grapharc.memory.sqlite.items import SQLiteItemStore

SIZES = (10_000, 100_000)
QUERIES = 20  # the brute-force baseline takes seconds a query at 100k items
K = 10

Ranked = list[tuple[str, float]]


def brute_force(items: Sequence[Item], embedder: Embedder) -> Callable[[str], Ranked]:
    """The baseline search: a plain store's BM25 ten fused with every item's vector compared."""
    plain = GraphARCStore(InMemoryItemStore())
    fill(plain, items)
    vectors = [(n, vector) for n, (_, _, value) in enumerate(items)
               if (vector := item_vector(embedder, value, None)) is not None]

    def search(query: str) -> Ranked:
        hits = plain.search(("users",), query=query, limit=K)
        lexical = [(hit.score or 0.0, int(hit.key[1:])) for hit in hits]
        wanted = query_vector(embedder, query)
        assert wanted is not None
        return [(f"k{n}", score) for score, n in fuse(lexical, every_similar(wanted, vectors), K)]
    return search


def measure(count: int, directory: Path, spec: str, postgres: str | None = None) -> dict[str, Any]:
    """Every figure at one size (grapharc-postgres's store too, on the database ``postgres``)."""
    items, queries = corpus(count)
    queries = queries[:QUERIES]
    embedder = open_embedder(spec)
    baseline = brute_force(items, embedder)
    row: dict[str, Any] = {"items": count, "queries": len(queries), "embedder": spec}
    row["brute force"], exact = latencies(baseline, queries, f"{count} items, brute force")
    stores = {"memory": GraphARCStore(InMemoryItemStore(embedder=embedder)),
              "sqlite": GraphARCStore(SQLiteItemStore(directory / f"vectors-{count}.db", embedder=embedder))}
    if postgres is not None:
        from grapharc.postgres.items import PostgresItemStore

        stores["postgres"] = GraphARCStore(PostgresItemStore(postgres, embedder=embedder))
    try:
        for name, store in stores.items():
            put = fill(store, items)
            wall = time.perf_counter()
            store.search(("users",), query=queries[0], limit=K)
            first = (time.perf_counter() - wall) * 1e3
            figures, found = latencies(lambda q, store=store: store.search(("users",), query=q, limit=K),
                                       queries, f"{count} items, {name}")
            for query, hits, wanted in zip(queries, found, exact, strict=True):
                expect_equal([(hit.key, hit.score) for hit in hits], wanted,
                             f"{name}'s ranking for {query!r} against brute force's")
            row[name] = {**figures, "first_ms": first, "put": put}
    finally:
        for store in stores.values():
            store.close()
    return row


def table(rows: list[dict[str, Any]]) -> str:
    """The figures as a fixed-width table, with each store's p50 against brute force's."""
    lines = [f"{'items':>8} {'search':>12} {'p50 ms':>8} {'p95 ms':>8} {'cpu p50 ms':>10} "
             f"{'vs brute p50':>12} {'first ms':>9} {'put us cpu':>10}"]
    for row in rows:
        brute = row["brute force"]
        lines.append(f"{row['items']:>8} {'brute force':>12} {brute['p50_ms']:>8.2f} {brute['p95_ms']:>8.2f} "
                     f"{brute['cpu_p50_ms']:>10.2f} {'1.0x':>12} {'-':>9} {'-':>10}")
        for name in stores_measured(row):
            figures = row[name]
            lines.append(f"{row['items']:>8} {name:>12} {figures['p50_ms']:>8.2f} {figures['p95_ms']:>8.2f} "
                         f"{figures['cpu_p50_ms']:>10.2f} {brute['p50_ms'] / figures['p50_ms']:>11.1f}x "
                         f"{figures['first_ms']:>9.1f} {figures['put']['cpu_us']:>10.1f}")
    largest = rows[-1]
    lines.append(f"embedder {largest['embedder']}; every ranking equals brute force's; aim: p95 <= 10 ms at "
                 f"100k items; at {largest['items']}: " + ", ".join(
                     f"{name} {largest[name]['p95_ms']:.2f} ms" for name in stores_measured(largest)))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k items only")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--embedder", type=EmbedderSpec(), default="hashing:256", metavar="SPEC",
                        help="the stores' embedder (default hashing:256)")
    parser.add_argument("--postgres", type=PostgresConninfo(), metavar="URI",
                        help="also measure the PostgreSQL item store, on a "
                                                          "scratch database of this server")
    arguments = parser.parse_args(argv)
    sizes = QUICK_SIZES if arguments.quick else SIZES
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for count in sizes:
            with scratch_database(arguments.postgres) as postgres:
                rows.append(measure(count, Path(directory), arguments.embedder, postgres))
            print(f"measured {count} items", file=sys.stderr)
    print(json.dumps({"rows": rows}, indent=2) if arguments.json else table(rows))
    return 0


if __name__ == "__main__":
    checked_main(main)
