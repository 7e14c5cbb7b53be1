"""One ``add()`` of a claim, µs: the in-process store and the SQLite store, ours against GraphARC
0.1.7's, in one run.

Each store is filled in a child process of its own interpreter (ours: this one; 0.1.7's:
``--original BIN``, the ``bin`` folder of a virtualenv it is installed in, by default
~/.cache/grapharc-017/bin when present). The child builds the claims first (text from a fixed
vocabulary, so every claim has terms to index), then times ``add(claim)`` one claim at a time
into a fresh store, round after round, the stores interleaved; a figure is the median round's
time per add. Durability is part of what is timed: after the last add, and before the store is
closed, the child counts the rows in the SQLite file through a connection of its own, so an add
that returned before its commit would show as a missing row. Every child must exit 0 and report
that each store holds exactly the claims it was given, in order (their ids read back through the
store), or no figure is printed.

    .venv/bin/python benchmarks/claim_add.py [--claims N] [--rounds N] [--quick] [--json]
                                             [--original BIN|none]
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from _arguments import Count, FolderOrNone, benchmark_parser
from _checked import checked_main, expect, expect_equal, run
from _original import original_bin

_CHILD_COMMON = """
import json, os, random, sqlite3, sys, tempfile, time
claims, rounds, kind = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
words = [f"w{index:03d}" for index in range(400)]
pick = random.Random(7)
texts = [(f"svc {pick.choice(words)}", pick.choice(words), " ".join(pick.sample(words, 3)))
         for _ in range(claims)]

def count_rows(path):
    connection = sqlite3.connect(path)
    try:
        return connection.execute("SELECT count(*) FROM claims").fetchone()[0]
    finally:
        connection.close()

def timed_round(folder, number):
    started = time.perf_counter()
    built = [make_claim(*text) for text in texts]
    building = time.perf_counter() - started
    path = os.path.join(folder, f"round{number}.db")
    store = open_store(path)
    started = time.perf_counter()
    for claim in built:
        store.add(claim)
    seconds = time.perf_counter() - started
    rows = count_rows(path) if kind == "sqlite" else None
    stored = stored_ids(store)
    close(store)
    return {"seconds": seconds, "building": building, "rows": rows,
            "in_order": stored == [claim.id for claim in built]}

with tempfile.TemporaryDirectory(prefix="claim-add-") as folder:
    print(json.dumps([timed_round(folder, number) for number in range(rounds)]))
"""

OURS = """
from datetime import UTC, datetime
from grapharc.memory.claims import Claim, Provenance
from grapharc.memory.inprocess import InMemoryClaimStore

def make_claim(subject, predicate, obj):
    return Claim(subject=subject, predicate=predicate, object=obj,
                 provenance=Provenance(source="bench", observed_at=datetime.now(UTC)))

def open_store(path):
    if kind == "sqlite":
        from grapharc.memory.sqlite.store import SQLiteMemoryStore
        return SQLiteMemoryStore(path)
    return InMemoryClaimStore()

def stored_ids(store):
    return [claim.id for claim in store.all(include_superseded=True)]

def close(store):
    store.close()
"""

ORIGINAL = """
from grapharc.memory.store import Claim, MemoryStore

def make_claim(subject, predicate, obj):
    return Claim(subject=subject, predicate=predicate, object=obj, source="bench")

def open_store(path):
    if kind == "sqlite":
        from grapharc.memory.sqlite_store import SQLiteMemoryStore
        return SQLiteMemoryStore(path)
    return MemoryStore()

def stored_ids(store):
    return [claim.id for claim in store.all_claims()]

def close(store):
    if kind == "sqlite":
        store.close()
"""


def fill(python: Path, api: str, kind: str, claims: int, rounds: int,
         label: str) -> list[tuple[float, float]]:
    """Seconds per add, and per claim built, of each round of ``label``, once every round is checked."""
    done = run([str(python), "-c", api + _CHILD_COMMON, str(claims), str(rounds), kind])
    try:
        results = json.loads(done.stdout)
    except ValueError:
        results = None
    expect(isinstance(results, list) and len(results) == rounds,
           f"{label}: printed no result per round: {done.stdout[-300:]!r}")
    for number, result in enumerate(results):
        if kind == "sqlite":
            expect_equal(result["rows"], claims, f"{label}, round {number}: rows committed when the "
                                                 "last add returned")
        expect(result["in_order"], f"{label}, round {number}: the store does not hold the claims "
                                   "it was given, in order")
    return [(result["seconds"] / claims, result["building"] / claims) for result in results]


def main() -> int:
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--claims", type=Count(1, 1_000_000), default=2000, help="claims added per round")
    parser.add_argument("--rounds", type=Count(1, 10_000), default=5)
    parser.add_argument("--quick", action="store_true", help="200 claims, 2 rounds")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--original", type=FolderOrNone(),
                        help="bin folder of a GraphARC 0.1.7 virtualenv, or none")
    args = parser.parse_args()
    claims, rounds = (200, 2) if args.quick else (args.claims, args.rounds)
    interpreters = {"ours": (Path(sys.executable), OURS)}
    original = original_bin(args.original, "python")
    if original is not None:
        interpreters["0.1.7"] = (original / "python", ORIGINAL)
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(rounds):  # one round per child, the stores interleaved, so drift hits all alike
        for kind in ("inprocess", "sqlite"):
            for name, (python, api) in interpreters.items():
                samples.setdefault((name, kind), []).extend(
                    fill(python, api, kind, claims, 1, f"{name} {kind}"))
    report = {f"{name} {kind}": {"add_us": round(statistics.median(add for add, _ in values) * 1e6, 2),
                                 "build_us": round(statistics.median(build for _, build in values) * 1e6, 2)}
              for (name, kind), values in samples.items()}
    if args.json:
        print(json.dumps({"per_claim": report, "claims": claims, "rounds": rounds}, indent=2))
        return 0
    print(f"one add() of a claim (and building the Claim first), median of {rounds} rounds of "
          f"{claims} adds each, µs per claim")
    for kind in ("inprocess", "sqlite"):
        for figure, what in (("add_us", "add()"), ("build_us", "Claim(...)")):
            ours = report[f"ours {kind}"][figure]
            row = f"  {kind:<10} {what:<11} ours {ours:>8.2f}"
            if original is not None:
                peer = report[f"0.1.7 {kind}"][figure]
                row += f"   0.1.7 {peer:>8.2f}   ours / 0.1.7 {ours / peer:.2f}x"
            print(row)
    return 0


if __name__ == "__main__":
    checked_main(main)
