"""The SQLite store's postings are written as append-only runs and merged LSM-style."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grapharc.memory.bm25f import weighted_frequencies
from grapharc.memory.claims import Claim
from grapharc.memory.sqlite.database import rows_per_statement
from grapharc.memory.sqlite.postings import MERGE_FANOUT, merge_start, terms_json
from grapharc.memory.sqlite.store import SQLiteMemoryStore
from grapharc.memory.terms import terms
from grapharc.testing.claims import make_claim, varied_claims


def settle(sizes: list[int], batch: int, rewritten: list[int]) -> None:
    """Add a run of ``batch`` claims to ``sizes`` and merge as ``merge_start`` says, counting
    in ``rewritten[0]`` the claims each merge copies."""
    sizes.append(batch)
    while (start := merge_start(sizes)) is not None:
        rewritten[0] += sum(sizes[start:])
        sizes[start:] = [sum(sizes[start:])]


def levels_of(claims: int) -> int:
    """How many size levels ``claims`` claims span, counting the first."""
    level = 1
    while claims >= MERGE_FANOUT:
        claims //= MERGE_FANOUT
        level += 1
    return level


@pytest.mark.parametrize("pattern", ["batches of 1,000", "single adds", "alternating 1 and 1,000",
                                     "random sizes"])
def test_runs_stay_few_and_each_claim_is_rewritten_about_once_per_level(pattern: str) -> None:
    rng = random.Random(5)
    batches = {"batches of 1,000": [1_000] * 300, "single adds": [1] * 5_000,
               "alternating 1 and 1,000": [1, 1_000] * 150,
               "random sizes": [rng.randint(1, 3_000) for _ in range(300)]}[pattern]
    sizes: list[int] = []
    rewritten = [0]
    for added, batch in enumerate(batches, start=1):
        settle(sizes, batch, rewritten)
        levels = levels_of(sum(sizes))
        assert len(sizes) <= (MERGE_FANOUT - 1) * levels, (added, sizes)
    assert sum(sizes) == sum(batches)
    assert rewritten[0] <= 2 * levels_of(sum(batches)) * sum(batches)


def test_a_batch_writes_its_rows_in_one_statement_per_table(tmp_path: Path) -> None:
    for size in (10, 1_000):
        store = SQLiteMemoryStore(tmp_path / f"{size}.db")
        connection = store._connection
        assert connection is not None
        claims_per_statement = rows_per_statement(connection, 9)
        statements: list[str] = []
        try:
            connection.set_trace_callback(statements.append)
            store.add_many([make_claim(f"Town {n}", "quiet streets") for n in range(size)])
        finally:
            store.close()
        counts = {table: sum(1 for statement in statements
                             if statement.startswith(f"INSERT INTO {table} "))
                  for table in ("claims", "claim_terms", "postings", "term_groups", "subject_keys")}
        per_row_table = -(-size // claims_per_statement)  # claims: 9 values a row, the widest
        assert counts == {"claims": per_row_table, "claim_terms": counts["claim_terms"],
                          "postings": 1, "term_groups": 1, "subject_keys": 1}
        assert 1 <= counts["claim_terms"] <= per_row_table


def test_a_new_batch_is_appended_as_the_highest_run(tmp_path: Path) -> None:
    store = SQLiteMemoryStore(tmp_path / "memory.db")
    connection = store._connection
    assert connection is not None
    try:
        store.add_many(varied_claims(300))
        before = connection.execute("SELECT max(run), max(seq) FROM postings").fetchone()
        store.add_many([make_claim("Zebra Crossing", "engine notes")])
        newest = connection.execute(
            "SELECT DISTINCT run FROM postings WHERE seq > ?", (before[1],)).fetchall()
        assert newest == [(before[0] + 1,)]
    finally:
        store.close()


def towns_with_new_words(start: int, count: int, new_towns: bool = False) -> list[Claim]:
    """Claims about seven towns (or each about a town of its own, named at random), each with
    three words no other claim has (ids in order)."""
    rng = random.Random(start)
    return [make_claim(f"Town {rng.randrange(10**9) if new_towns else n % 7}",
                       " ".join(f"w{rng.randrange(10**9)}" for _ in range(3)),
                       claim_id=f"c{n:07d}") for n in range(start, start + count)]


def pages_one_batch_writes(path: Path, stored: int, new_towns: bool = False) -> int:
    """Pages the WAL receives while a batch of 1,000 claims is added to a file of ``stored``."""
    store = SQLiteMemoryStore(path)
    try:
        for start in range(0, stored, 1_000):
            store.add_many(towns_with_new_words(start, 1_000, new_towns))
        connection = store._connection
        assert connection is not None
        connection.execute("PRAGMA wal_autocheckpoint=0")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store.add_many(towns_with_new_words(stored, 1_000, new_towns))
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        wal_bytes = Path(f"{path}-wal").stat().st_size
    finally:
        store.close()
    return (wal_bytes - 32) // (page_size + 24)  # the WAL header, then one header per frame


def test_a_batch_of_new_words_writes_about_as_many_pages_to_a_large_file_as_to_a_small_one(
    tmp_path: Path,
) -> None:
    small = pages_one_batch_writes(tmp_path / "small.db", 2_000)
    large = pages_one_batch_writes(tmp_path / "large.db", 20_000)
    assert large < 1.25 * small  # postings keyed by term first: 252 pages, then 1,094



def test_a_batch_about_new_subjects_writes_about_as_many_pages_to_a_large_file_as_to_a_small_one(
    tmp_path: Path,
) -> None:
    small = pages_one_batch_writes(tmp_path / "small.db", 2_000, new_towns=True)
    large = pages_one_batch_writes(tmp_path / "large.db", 20_000, new_towns=True)
    assert large < 1.25 * small  # an index on claims' subject key: 173 pages, then 286


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(), min_size=1, max_size=3))
def test_the_terms_json_written_without_an_encoder_is_the_json_of_any_texts_frequencies(
        texts: list[str]) -> None:
    claim = Claim(id="c", subject=texts[0] + "x", predicate=texts[-1] + "is",
                  object=" ".join(texts) + "y",
                  provenance={"source": "s", "observed_at": "2026-01-01T00:00:00+00:00"})
    frequencies, _ = weighted_frequencies(claim)
    assert json.loads(terms_json(frequencies, {})) == frequencies


def test_claims_whose_text_json_would_escape_are_found_by_every_term(tmp_path: Path) -> None:
    texts = ['quote " back \\ slash', "tab\tnew\nline \x00nul", "東京都 \u2028 ﬁle", "ｆｕｌｌ ẞtraße"]
    store = SQLiteMemoryStore(tmp_path / "claims.db")
    try:
        store.add_many([make_claim(text, text, predicate="says", claim_id=f"c{n}")
                        for n, text in enumerate(texts)])
        for n, text in enumerate(texts):
            for term in terms(text):
                assert f"c{n}" in {hit.claim.id for hit in store.search(term, k=10)}, term
    finally:
        store.close()


def test_under_the_old_limit_of_999_parameters_a_batch_is_split_and_every_claim_stored(
        tmp_path: Path) -> None:
    store = SQLiteMemoryStore(tmp_path / "claims.db")
    connection = store._connection
    assert connection is not None
    connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
    claims = varied_claims(1_000)
    statements: list[str] = []
    try:
        connection.set_trace_callback(statements.append)
        store.add_many(claims)
        connection.set_trace_callback(None)
        assert sum(1 for s in statements if s.startswith("INSERT INTO claims ")) == -(-1_000 // 111)
        assert [claim.id for claim in store.all()] == [claim.id for claim in claims]
        last = claims[-1]
        assert last.id in {claim.id for claim in store.about(last.subject)}
        assert last.id in {hit.claim.id for hit in store.search(last.subject, k=1_000)}
    finally:
        store.close()
