"""Long-term store search: ``memory:`` and ``sqlite:`` (and ``postgresql:``) against a linear BM25 scan.

A synthetic corpus of items under ``("users", "u0")`` .. ``("users", "u99")``, each value
``{"text": ..., "n": ...}`` whose text is 4 to 14 made-up words drawn with Zipfian
popularity (the r-th commonest word 1/r as likely as the first) from a vocabulary
that grows with the corpus as Heaps' law has it, at 10k and 100k items. Queries are one
to three words of a stored item's text. Measured per store and size, through
``GraphARCStore`` (LangGraph's ``BaseStore`` API, as a node calls it):
- ``search(("users",), query=..., limit=10)`` latency, p50 and p95 wall milliseconds, and
  the median CPU milliseconds of the process (wall time is noisy on a shared machine);
- ``put`` cost per item, wall and CPU microseconds (SQLite: one ``BEGIN IMMEDIATE``
  transaction per put, in WAL mode with ``synchronous=FULL``, so wall time is mostly the
  fsync), with what was alive before the fill frozen out of the garbage collector;
and the baseline: the same search as a linear scan in Python over every item's term counts
(computed before timing, so only the per-query O(items) work is timed), ranking exactly as
the stores must. Every fill must hold every item (the last read back by key), every query
must find an item in each store and the scan, and each store's ten scores must be the
scan's; otherwise the script exits 1 and prints no figure. ``--quick`` measures 1k items only.
``--postgres URI`` (a server where a scratch database may be created, such as
``postgresql://postgres@127.0.0.1:5432/postgres``) measures grapharc-postgres's item store too,
on a database made for each size and dropped after it (each put one transaction, committed with
the server's ``synchronous_commit``). The aim is the memory plane's: at most 10 ms p95 at 100k items.

    .venv/bin/python benchmarks/store_search.py [--quick] [--json] [--postgres URI]
"""

from __future__ import annotations

import gc
import heapq
import itertools
import json
import math
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _arguments import PostgresConninfo, benchmark_parser
from _checked import checked_main, expect, expect_equal

from grapharc.memory.bm25f import idf, term_score
from grapharc.memory.longterm import GraphARCStore, InMemoryItemStore
from grapharc.memory.longterm.texts import term_counts
from grapharc.memory.sqlite.items import SQLiteItemStore
from grapharc.memory.terms import query_terms

SIZES = (10_000, 100_000)
QUICK_SIZES = (1_000,)
"""``--quick``'s one size: enough for every check to bite, small enough for a smoke run (and the tests)."""
QUERIES = 60
NAMESPACES = 100
K = 10
STORES = ("memory", "sqlite", "postgres")
SYLLABLES = ("ka", "lo", "mi", "ra", "tu", "ven", "do", "shi", "par", "el", "no", "qui", "zor",
             "ba", "fen", "gri", "hol", "jas", "wek", "yun")

Item = tuple[tuple[str, ...], str, dict[str, Any]]


def corpus(count: int, seed: int = 35) -> tuple[list[Item], list[str]]:
    """``count`` items and the queries to ask of them."""
    rng = random.Random(seed)
    words: set[str] = set()
    while len(words) < int(30 * math.sqrt(count * 9)):
        words.add("".join(rng.choices(SYLLABLES, k=rng.randint(2, 4))))
    vocabulary = sorted(words)
    rng.shuffle(vocabulary)
    weights = list(itertools.accumulate(1.0 / rank for rank in range(1, len(vocabulary) + 1)))
    items = [(("users", f"u{n % NAMESPACES}"), f"k{n}",
              {"text": " ".join(rng.choices(vocabulary, cum_weights=weights, k=rng.randint(4, 14))), "n": n})
             for n in range(count)]
    queries = []
    for _ in range(QUERIES):
        text = rng.choice(items)[2]["text"].split()
        queries.append(" ".join(rng.sample(text, min(len(text), rng.randint(1, 3)))))
    return items, queries


class Scan:
    """The baseline: every item's term counts, scored one by one per query."""

    def __init__(self, items: Sequence[Item]) -> None:
        self.keys = [key for _, key, _ in items]
        self.documents = [term_counts(value, None) for _, _, value in items]
        self.average = sum(length for _, length in self.documents) / len(self.documents)

    def search(self, query: str) -> list[tuple[float, str]]:
        wanted = query_terms(query)
        idfs = [idf(len(self.documents), sum(1 for counts, _ in self.documents if term in counts))
                for term in wanted]
        scored = []
        for key, (counts, length) in zip(self.keys, self.documents, strict=True):
            held = [(term, term_idf) for term, term_idf in zip(wanted, idfs, strict=True) if term in counts]
            if held:
                scored.append((sum(term_score(term_idf, counts[term], length, self.average)
                                   for term, term_idf in held), key))
        return heapq.nlargest(K, scored)


def fill(store: GraphARCStore, items: Sequence[Item]) -> dict[str, float]:
    """Put every item; wall and CPU microseconds per item."""
    gc.collect()
    gc.freeze()
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        for namespace, key, value in items:
            store.put(namespace, key, value)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        gc.unfreeze()
    namespace, key, value = items[-1]
    last = store.get(namespace, key)
    expect(last is not None and last.value == value, f"{type(store.items).__name__} lost the last item put")
    return {"wall_us": wall / len(items) * 1e6, "cpu_us": cpu / len(items) * 1e6}


def latencies(search: Callable[[str], list[Any]], queries: Sequence[str],
              where: str) -> tuple[dict[str, float], list[list[Any]]]:
    """p50 and p95 wall ms and median CPU ms per query, and the results; each query must find something."""
    walls, cpus, results = [], [], []
    for query in queries:
        wall, cpu = time.perf_counter(), time.process_time()
        found = search(query)
        walls.append((time.perf_counter() - wall) * 1e3)
        cpus.append((time.process_time() - cpu) * 1e3)
        expect(found, f"{where}: the query {query!r} found nothing")
        results.append(found)
    walls.sort()
    return {"p50_ms": statistics.median(walls), "p95_ms": walls[round(0.95 * (len(walls) - 1))],
            "cpu_p50_ms": statistics.median(cpus)}, results


@contextmanager
def scratch_database(admin: str | None) -> Iterator[str | None]:
    """The URI of a fresh database on the server ``admin`` names, dropped afterwards (None: no server)."""
    if admin is None:
        yield None
        return
    import psycopg  # only with --postgres

    name = f"grapharc_store_search_{os.getpid()}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield admin.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def measure(count: int, directory: Path, postgres: str | None = None) -> dict[str, Any]:
    """Every figure at one size (grapharc-postgres's store too, on the database ``postgres``)."""
    items, queries = corpus(count)
    scan = Scan(items)
    row: dict[str, Any] = {"items": count, "queries": len(queries)}
    row["scan"], exact = latencies(scan.search, queries, f"{count} items, scan")
    stores = {"memory": GraphARCStore(InMemoryItemStore()),
              "sqlite": GraphARCStore(SQLiteItemStore(directory / f"items-{count}.db"))}
    if postgres is not None:
        from grapharc.postgres.items import PostgresItemStore

        stores["postgres"] = GraphARCStore(PostgresItemStore(postgres))
    try:
        for name, store in stores.items():
            put = fill(store, items)
            figures, found = latencies(lambda q, store=store: store.search(("users",), query=q, limit=K),
                                       queries, f"{count} items, {name}")
            for query, hits, wanted in zip(queries, found, exact, strict=True):
                expect_equal([round(hit.score, 9) for hit in hits], [round(score, 9) for score, _ in wanted],
                             f"{name}'s scores for {query!r} against the scan's")
            row[name] = {**figures, "put": put}
    finally:
        for store in stores.values():
            store.close()
    return row


def table(rows: list[dict[str, Any]]) -> str:
    """The figures as a fixed-width table, with each store's p50 against the scan's."""
    lines = [f"{'items':>8} {'search':>8} {'p50 ms':>8} {'p95 ms':>8} {'cpu p50 ms':>10} {'vs scan p50':>11} "
             f"{'put us wall':>11} {'put us cpu':>10}"]
    for row in rows:
        scan = row["scan"]
        lines.append(f"{row['items']:>8} {'scan':>8} {scan['p50_ms']:>8.2f} {scan['p95_ms']:>8.2f} "
                     f"{scan['cpu_p50_ms']:>10.2f} {'1.0x':>11} {'-':>11} {'-':>10}")
        for name in stores_measured(row):
            figures = row[name]
            lines.append(f"{row['items']:>8} {name:>8} {figures['p50_ms']:>8.2f} {figures['p95_ms']:>8.2f} "
                         f"{figures['cpu_p50_ms']:>10.2f} {scan['p50_ms'] / figures['p50_ms']:>10.1f}x "
                         f"{figures['put']['wall_us']:>11.1f} {figures['put']['cpu_us']:>10.1f}")
    largest = rows[-1]
    lines.append(f"aim: p95 <= 10 ms at 100k items; at {largest['items']}: " + ", ".join(
        f"{name} {largest[name]['p95_ms']:.2f} ms" for name in stores_measured(largest)))
    return "\n".join(lines)


def stores_measured(row: dict[str, Any]) -> list[str]:
    """The stores a row measured, in ``STORES`` order."""
    return [name for name in STORES if name in row]


def main(argv: Sequence[str] | None = None) -> int:
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k items only")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--postgres", type=PostgresConninfo(), metavar="URI",
                        help="also measure the PostgreSQL item store, on a "
                                                          "scratch database of this server")
    arguments = parser.parse_args(argv)
    sizes = QUICK_SIZES if arguments.quick else SIZES
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for count in sizes:
            with scratch_database(arguments.postgres) as postgres:
                rows.append(measure(count, Path(directory), postgres))
            print(f"measured {count} items", file=sys.stderr)
    print(json.dumps({"rows": rows}, indent=2) if arguments.json else table(rows))
    return 0


if __name__ == "__main__":
    checked_main(main)
