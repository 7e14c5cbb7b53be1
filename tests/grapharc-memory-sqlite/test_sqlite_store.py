"""SQLiteMemoryStore keeps the ClaimStore contract on disk, across processes and crashes."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from grapharc.errors import ConfigurationError
from grapharc.memory.bm25f import exact_search, weighted_frequencies
from grapharc.memory.claims import Claim, ClaimStoreError, normalise_entity
from grapharc.memory.sqlite.postings import MERGE_FANOUT
from grapharc.memory.sqlite.store import SQLiteMemoryStore, open_claim_store
from grapharc.memory.terms import terms
from grapharc.testing.claim_store_kit import ClaimStoreConformance
from grapharc.testing.claims import make_claim, varied_claims

WRITER = """
import json, sys
from grapharc.memory.sqlite.store import SQLiteMemoryStore
from grapharc.testing.claims import make_claim

store = SQLiteMemoryStore(sys.argv[1])
old = store.add(make_claim("東京", "8 million", predicate="population", run_id="run-1"))
new = store.supersede(old.id, make_claim("東京", "14 million", predicate="population"))
other = store.add(make_claim("北京", "21 million", predicate="population"))
store.close()
print(json.dumps({"old": old.id, "new": new.id, "other": other.id}))
"""

READER = """
import json, sys
from grapharc.memory.sqlite.store import SQLiteMemoryStore

store = SQLiteMemoryStore(sys.argv[1])
print(json.dumps({
    "all": [c.model_dump(mode="json") for c in store.all(include_superseded=True)],
    "about_tokyo": [c.id for c in store.about("東京")],
    "history": [c.id for c in store.history(sys.argv[2])],
}))
store.close()
"""

CRASH_MID_SUPERSESSION = """
import os, sys
from grapharc.memory.sqlite.store import SQLiteMemoryStore
from grapharc.testing.claims import make_claim

store = SQLiteMemoryStore(sys.argv[1])
store.add(make_claim("Tokyo", "v1", claim_id="old"))

def die_before_linking(statement):
    if statement.startswith("INSERT INTO supersessions"):
        os._exit(9)

store._connection.set_trace_callback(die_before_linking)
store.supersede("old", make_claim("Tokyo", "v2", claim_id="new"))
"""


def run_python(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a separate interpreter and return the finished process."""
    return subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=False
    )


def run_json(script: str, *args: str) -> dict[str, object]:
    """Run ``script`` in a separate interpreter, require success, and parse its stdout."""
    finished = run_python(script, *args)
    assert finished.returncode == 0, finished.stderr
    return json.loads(finished.stdout)


class TestSQLiteMemoryStoreConformance(ClaimStoreConformance):
    """Runs the conformance kit against a SQLite file, including close-and-reopen."""

    durable = True

    def make_store(self, tmp_path: Path) -> SQLiteMemoryStore:
        return SQLiteMemoryStore(tmp_path / "memory.db")


def test_claims_written_by_one_process_are_read_by_another(tmp_path: Path) -> None:
    path = str(tmp_path / "memory.db")
    ids = run_json(WRITER, path)
    seen = run_json(READER, path, str(ids["old"]))
    assert [c["id"] for c in seen["all"]] == [ids["old"], ids["new"], ids["other"]]
    assert seen["all"][0]["superseded_by"] == ids["new"]
    assert seen["all"][0]["provenance"]["run_id"] == "run-1"
    assert seen["all"][0]["provenance"]["observed_at"] == "2024-05-01T12:30:15.123456Z"
    assert seen["about_tokyo"] == [ids["new"]]
    assert seen["history"] == [ids["old"], ids["new"]]


def test_an_open_store_sees_what_another_process_commits(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SQLiteMemoryStore(path)
    try:
        mine = store.add(make_claim("Kyoto", "old capital"))
        ids = run_json(WRITER, str(path))
        assert [c.id for c in store.all()] == [mine.id, ids["new"], ids["other"]]
        assert store.get(str(ids["old"])).superseded_by == ids["new"]
    finally:
        store.close()


def test_a_crash_inside_a_supersession_leaves_no_half_of_it(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    crashed = run_python(CRASH_MID_SUPERSESSION, str(path))
    assert crashed.returncode == 9, crashed.stderr
    store = SQLiteMemoryStore(path)
    try:
        assert [c.id for c in store.all(include_superseded=True)] == ["old"]
        assert store.get("old").superseded_by is None
        assert [c.id for c in store.history("old")] == ["old"]
    finally:
        store.close()


def test_the_file_is_in_wal_mode_with_a_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    SQLiteMemoryStore(path).close()
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert raw.execute("SELECT component, version FROM schema_versions").fetchall() == [
            ("claims", 5)
        ]
    finally:
        raw.close()


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE claims SET object = 'rewritten'",
        "DELETE FROM claims",
        "UPDATE supersessions SET new_id = old_id",
        "DELETE FROM supersessions",
    ],
)
def test_stored_claims_and_corrections_cannot_be_rewritten_behind_the_store(
    tmp_path: Path, statement: str
) -> None:
    path = tmp_path / "memory.db"
    store = SQLiteMemoryStore(path)
    old = store.add(make_claim("Tokyo", "v1"))
    store.supersede(old.id, make_claim("Tokyo", "v2"))
    store.close()
    raw = sqlite3.connect(path)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            raw.execute(statement)
    finally:
        raw.close()


def test_a_file_from_a_newer_schema_is_refused_naming_both_versions(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    SQLiteMemoryStore(path).close()
    raw = sqlite3.connect(path)
    raw.execute("UPDATE schema_versions SET version = 7 WHERE component = 'claims'")
    raw.commit()
    raw.close()
    with pytest.raises(ClaimStoreError, match=r"version 7.*reads version 5"):
        SQLiteMemoryStore(path)


def test_an_sqlite_without_json_functions_is_refused_before_any_table_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    connect = sqlite3.connect

    def without_json(*args: object, **kwargs: object) -> sqlite3.Connection:
        connection = connect(*args, **kwargs)  # type: ignore[arg-type]
        json_read = (sqlite3.SQLITE_READ, "json_each")
        connection.set_authorizer(lambda action, table, *_: sqlite3.SQLITE_DENY
                                  if (action, table) == json_read else sqlite3.SQLITE_OK)
        return connection

    monkeypatch.setattr(sqlite3, "connect", without_json)
    path = tmp_path / "memory.db"
    with pytest.raises(ClaimStoreError, match=r"memory\.db.*needs SQLite's JSON functions") as refused:
        SQLiteMemoryStore(path)
    assert "3.38" in (refused.value.hint or "")
    monkeypatch.setattr(sqlite3, "connect", connect)
    with connect(path) as raw:
        assert raw.execute("SELECT count(*) FROM sqlite_master WHERE name = 'claims'").fetchone() == (0,)


def test_a_file_that_is_not_sqlite_is_refused_naming_the_path(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a database\n" * 200)
    with pytest.raises(ClaimStoreError, match=r"notes\.txt"):
        SQLiteMemoryStore(path)


def test_a_path_in_a_missing_directory_is_refused_naming_the_path(tmp_path: Path) -> None:
    with pytest.raises(ClaimStoreError, match="no-such-dir"):
        SQLiteMemoryStore(tmp_path / "no-such-dir" / "memory.db")


def test_sqlite_uri_opens_the_file_it_names(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = open_claim_store(str(path), "claims")
    store.add(make_claim("Tokyo"))
    store.close()
    assert path.exists()


def test_sqlite_uri_without_a_path_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="names no file"):
        open_claim_store("", "claims")


def test_sqlite_uri_for_another_store_kind_is_refused_naming_the_kind(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="'sessions'"):
        open_claim_store(str(tmp_path / "memory.db"), "sessions")


MIGRATION_CRASH = """
import os, sys
from grapharc.memory.sqlite.store import SQLiteMemoryStore

def die_while_indexing(statement):
    if statement.startswith("INSERT INTO postings"):
        os._exit(9)

import sqlite3
original = sqlite3.connect

def traced(*args, **kwargs):
    connection = original(*args, **kwargs)
    connection.set_trace_callback(die_while_indexing)
    return connection

sqlite3.connect = traced
SQLiteMemoryStore(sys.argv[1])
"""

FULL_TEXT_VERSION_2 = (
    "CREATE VIRTUAL TABLE claims_fts USING fts5(subject, predicate, object, content='', "
    "tokenize=\"unicode61 remove_diacritics 0 categories 'L* N* Co M*'\")"
)


POSTINGS_VERSION_3 = (
    "CREATE TABLE postings (term TEXT NOT NULL, frequency REAL NOT NULL, "
    "length INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (term, frequency, length, seq)) "
    "WITHOUT ROWID",
    "CREATE INDEX postings_by_claim ON postings (seq, term)",
    "CREATE TABLE term_groups (term TEXT NOT NULL, frequency REAL NOT NULL, "
    "length INTEGER NOT NULL, claims INTEGER NOT NULL, PRIMARY KEY (term, frequency, length)) "
    "WITHOUT ROWID",
    "CREATE TABLE claim_totals (claims INTEGER NOT NULL, length INTEGER NOT NULL)",
)


def write_version_3_index(raw: sqlite3.Connection, claims: list[Claim]) -> None:
    """The postings version 3 kept, keyed by term first, over ``claims`` (stored in order)."""
    for statement in POSTINGS_VERSION_3:
        raw.execute(statement)
    documents = [(seq, *weighted_frequencies(claim)) for seq, claim in enumerate(claims, 1)]
    raw.executemany("INSERT INTO postings VALUES (?, ?, ?, ?)",
                    [(term, frequency, length, seq) for seq, frequencies, length in documents
                     for term, frequency in frequencies.items()])
    raw.execute("INSERT INTO term_groups SELECT term, frequency, length, count(*) FROM postings "
                "GROUP BY term, frequency, length")
    raw.execute("INSERT INTO claim_totals VALUES (?, ?)",
                (len(documents), sum(length for _, _, length in documents)))


POSTINGS_VERSION_4 = (
    "CREATE TABLE claim_terms (seq INTEGER PRIMARY KEY, length INTEGER NOT NULL, "
    "terms TEXT NOT NULL)",
    "CREATE TABLE runs (run INTEGER PRIMARY KEY, first_seq INTEGER NOT NULL, "
    "last_seq INTEGER NOT NULL)",
    "CREATE TABLE postings (run INTEGER NOT NULL, term TEXT NOT NULL, frequency REAL NOT NULL, "
    "length INTEGER NOT NULL, seq INTEGER NOT NULL, "
    "PRIMARY KEY (run, term, frequency, length, seq)) WITHOUT ROWID",
    "CREATE TABLE term_groups (run INTEGER NOT NULL, term TEXT NOT NULL, "
    "frequency REAL NOT NULL, length INTEGER NOT NULL, claims INTEGER NOT NULL, "
    "PRIMARY KEY (run, term, frequency, length)) WITHOUT ROWID",
    "CREATE TABLE claim_totals (claims INTEGER NOT NULL, length INTEGER NOT NULL)",
)


def write_version_4_index(raw: sqlite3.Connection, claims: list[Claim]) -> None:
    """The runs version 4 kept, without subject keys, over ``claims`` (stored in order): each
    claim's term frequencies as JSON keyed by term, and every claim in one run."""
    for statement in POSTINGS_VERSION_4:
        raw.execute(statement)
    documents = [(seq, *weighted_frequencies(claim)) for seq, claim in enumerate(claims, 1)]
    raw.executemany("INSERT INTO claim_terms VALUES (?, ?, ?)",
                    [(seq, length, json.dumps(frequencies))
                     for seq, frequencies, length in documents])
    raw.execute("INSERT INTO runs VALUES (1, 1, ?)", (len(documents),))
    raw.execute("INSERT INTO postings SELECT 1, t.key, t.value, c.length, c.seq "
                "FROM claim_terms AS c, json_each(c.terms) AS t")
    raw.execute("INSERT INTO term_groups SELECT run, term, frequency, length, count(*) "
                "FROM postings GROUP BY run, term, frequency, length")
    raw.execute("INSERT INTO claim_totals VALUES (?, ?)",
                (len(documents), sum(length for _, _, length in documents)))


def write_older_file(path: Path, version: int) -> list[Claim]:
    """A claims file in the layout of schema ``version`` (1: claims only; 2: with the FTS5
    index version 2 wrote, each claim's terms per field, space-joined, keyed by seq; 3: with
    the postings tables version 3 wrote; 4: with the runs version 4 wrote)."""
    store = SQLiteMemoryStore(path)
    old = store.add(make_claim("東京", "8 million", predicate="population"))
    claims = [old, store.supersede(old.id, make_claim("東京", "14 million", predicate="population")),
              *store.add_many(varied_claims(300))]
    store.close()
    raw = sqlite3.connect(path)
    raw.executescript("DROP TABLE postings; DROP TABLE term_groups; DROP TABLE claim_totals; "
                      "DROP TABLE claim_terms; DROP TABLE runs; DROP TABLE subject_keys; "
                      "CREATE INDEX claims_by_subject_key ON claims (subject_key);")
    if version == 4:
        write_version_4_index(raw, claims)
    if version == 3:
        write_version_3_index(raw, claims)
    if version == 2:
        raw.execute(FULL_TEXT_VERSION_2)
        rows = raw.execute("SELECT seq, subject, predicate, object FROM claims").fetchall()
        raw.executemany(
            "INSERT INTO claims_fts (rowid, subject, predicate, object) VALUES (?, ?, ?, ?)",
            [(seq, *(" ".join(terms(text)) for text in fields)) for seq, *fields in rows])
    raw.execute("UPDATE schema_versions SET version = ? WHERE component = 'claims'", (version,))
    raw.commit()
    raw.close()
    return claims


def current_about(claims: list[Claim], subject: str) -> list[Claim]:
    """What ``about(subject)`` must return from ``claims`` (all of a store's, in order)."""
    about = [claim for claim in claims if claim.subject_key == normalise_entity(subject)
             and claim.superseded_by is None]
    assert about
    return about


def first_row(path: Path, sql: str) -> tuple[object, ...]:
    """The first row ``sql`` selects from the file at ``path``, read outside the store."""
    raw = sqlite3.connect(path)
    try:
        return tuple(raw.execute(sql).fetchone())
    finally:
        raw.close()


SUBJECT_KEY_INDEXES = ("SELECT count(*) FROM sqlite_master WHERE type = 'index' "
                       "AND name = 'claims_by_subject_key'")


def table_names(path: Path) -> set[str]:
    raw = sqlite3.connect(path)
    try:
        return {row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        raw.close()


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_an_older_file_is_migrated_to_runs_over_the_claims_it_holds(
    tmp_path: Path, version: int
) -> None:
    path = tmp_path / "memory.db"
    claims = write_older_file(path, version)
    migrated = SQLiteMemoryStore(path)
    try:
        assert migrated.get(claims[0].id).superseded_by == claims[1].id
        everything = migrated.all(include_superseded=True)
        assert len(everything) == len(claims)
        for query in ("東京 population", "million", "engine Tokyo", "Ada Lovelace notes"):
            for include_superseded in (False, True):
                assert migrated.search(query, 5, include_superseded) == exact_search(
                    everything, query, 5, include_superseded)
        assert migrated.about("東京") == current_about(everything, "東京")
        migrated.add(make_claim("Kyoto", "1.5 million", predicate="population"))
        assert migrated.search("Kyoto")[0].claim.subject == "Kyoto"
        assert migrated.about("kyoto")[-1].object == "1.5 million"
    finally:
        migrated.close()
    names = table_names(path)
    assert {"claim_terms", "runs", "postings", "term_groups", "subject_keys",
            "claim_totals"} <= names
    assert not any(name.startswith("claims_fts") for name in names)
    assert first_row(path, "SELECT version FROM schema_versions") == (5,)
    assert first_row(path, SUBJECT_KEY_INDEXES) == (0,)


def test_a_migration_that_dies_midway_leaves_the_version_2_file_as_it_was(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.db"
    claims = write_older_file(path, 2)
    assert run_python(MIGRATION_CRASH, str(path)).returncode == 9
    names = table_names(path)
    assert "claims_fts" in names
    assert "postings" not in names
    assert first_row(path, "SELECT version FROM schema_versions") == (2,)
    reopened = SQLiteMemoryStore(path)
    try:
        assert reopened.all(include_superseded=True) == [reopened.get(c.id) for c in claims]
        assert reopened.search("14 million")[0].claim.id == claims[1].id
    finally:
        reopened.close()


def test_a_migration_that_dies_midway_leaves_the_version_4_file_as_it_was(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.db"
    claims = write_older_file(path, 4)
    assert run_python(MIGRATION_CRASH, str(path)).returncode == 9
    assert "subject_keys" not in table_names(path)
    assert first_row(path, "SELECT version FROM schema_versions") == (4,)
    assert first_row(path, SUBJECT_KEY_INDEXES) == (1,)
    reopened = SQLiteMemoryStore(path)
    try:
        everything = reopened.all(include_superseded=True)
        assert everything == [reopened.get(c.id) for c in claims]
        assert reopened.search("14 million") == exact_search(everything, "14 million")
        assert reopened.about("東京") == current_about(everything, "東京")
    finally:
        reopened.close()


MERGE_CRASH = """
import os, sys
from grapharc.memory.sqlite.postings import MERGE_FANOUT
from grapharc.memory.sqlite.store import SQLiteMemoryStore
from grapharc.testing.claims import make_claim

store = SQLiteMemoryStore(sys.argv[1])
for n in range(MERGE_FANOUT - 1):
    store.add(make_claim(f"Town {n}", "quiet streets"))

def die_while_merging(statement):
    if statement.startswith("DELETE FROM postings"):
        os._exit(9)

store._connection.set_trace_callback(die_while_merging)
store.add(make_claim("Tokyo", "busy streets"))  # the run that makes MERGE_FANOUT single runs
"""


def test_a_crash_while_merging_runs_loses_only_the_batch_being_added(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    assert run_python(MERGE_CRASH, str(path)).returncode == 9
    store = SQLiteMemoryStore(path)
    try:
        everything = store.all(include_superseded=True)
        assert [claim.subject for claim in everything] == [
            f"Town {n}" for n in range(MERGE_FANOUT - 1)]
        for query in ("streets", "Town 3", "busy Tokyo"):
            assert store.search(query, k=3) == exact_search(everything, query, k=3)
        store.add(make_claim("Tokyo", "busy streets"))
        assert store.search("busy Tokyo", k=1)[0].claim.subject == "Tokyo"
    finally:
        store.close()
    assert first_row(path, "SELECT count(*) FROM runs") == (1,)


def test_search_reads_rows_through_indexes_only(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SQLiteMemoryStore(path)
    old = store.add(make_claim("Tokyo", "busy streets"))
    store.supersede(old.id, make_claim("Tokyo", "busy quiet streets"))
    store.add_many([make_claim(f"Town {n}", "quiet streets") for n in range(40)])
    statements: list[str] = []
    connection = store._connection
    assert connection is not None
    connection.set_trace_callback(statements.append)
    try:
        for query in ("Tokyo", "busy Town streets", "quiet Tokyo"):
            store.search(query, k=3)
    finally:
        connection.set_trace_callback(None)
    selects = [statement for statement in statements
               if statement.lstrip().startswith(("SELECT", "WITH"))]
    assert selects
    plans = [row[3] for statement in selects
             for row in connection.execute(f"EXPLAIN QUERY PLAN {statement}")]
    store.close()
    # claim_totals holds one row, runs a few per eightfold of claims, json_each one claim's terms
    small = ("claim_totals", "runs", "VIRTUAL TABLE")
    assert not any(plan.startswith("SCAN") and not any(name in plan for name in small)
                   for plan in plans)


def count_steps(store: SQLiteMemoryStore, query: str, k: int) -> int:
    """How many SQLite virtual-machine steps ``store.search`` takes: work, never time."""
    connection = store._connection
    assert connection is not None
    steps = 0

    def step() -> int:
        nonlocal steps
        steps += 1
        return 0

    connection.set_progress_handler(step, 1)
    try:
        store.search(query, k=k)
    finally:
        connection.set_progress_handler(None, 1)
    return steps


@pytest.mark.parametrize("query", ["streets", "streets Tokyo", "busy Town"])
def test_a_common_term_costs_the_same_however_many_claims_hold_it(
    tmp_path: Path, query: str
) -> None:
    steps = []
    for towns in (200, 2_000):
        store = SQLiteMemoryStore(tmp_path / f"{towns}.db")
        try:
            store.add_many([make_claim(f"Town {n}", "quiet streets") for n in range(towns)])
            store.add(make_claim("Tokyo", "busy streets"))
            everything = store.all(include_superseded=True)
            for k in (1, 3):
                assert store.search(query, k=k) == exact_search(everything, query, k=k)
            steps.append([count_steps(store, query, k) for k in (1, 3)])
        finally:
            store.close()
    assert steps[0] == steps[1]


def add_in_one_batch(store: SQLiteMemoryStore) -> list[Claim]:
    return store.add_many(varied_claims(600))


def add_in_batches_of_mixed_sizes(store: SQLiteMemoryStore) -> list[Claim]:
    """The same claims in batches of 1 to 200, so the postings are in runs of several sizes,
    some merged as they came."""
    rng = random.Random(11)
    pool = varied_claims(600)
    added: list[Claim] = []
    while len(added) < len(pool):
        added += store.add_many(pool[len(added):len(added) + rng.choice((1, 1, 3, 17, 60, 200))])
    assert store._connection is not None
    assert store._connection.execute("SELECT count(*) FROM runs").fetchone()[0] > 1
    return added


@pytest.mark.parametrize("adding", [add_in_one_batch, add_in_batches_of_mixed_sizes])
def test_search_returns_the_scans_top_k_in_the_scans_order_with_corrections(
    tmp_path: Path, adding: Callable[[SQLiteMemoryStore], list[Claim]]
) -> None:
    store = SQLiteMemoryStore(tmp_path / "memory.db")
    try:
        claims = adding(store)
        for old in claims[::7]:
            store.supersede(old.id, make_claim(old.subject, "corrected engine",
                                               predicate=old.predicate))
        everything = store.all(include_superseded=True)
        for query in ("engine", "Tokyo", "Ada Lovelace notes", "東京 city", "नई दिल्ली",
                      "worked with Babbage", "engine program million city island", "corrected"):
            for k in (1, 4, 25, 900):
                for include_superseded in (False, True):
                    assert store.search(query, k, include_superseded) == exact_search(
                        everything, query, k, include_superseded)
    finally:
        store.close()


def test_a_result_count_or_query_beyond_sqlites_parameter_limit_is_answered(tmp_path: Path) -> None:
    store = SQLiteMemoryStore(tmp_path / "memory.db")
    try:
        store.add_many([make_claim(f"Town {n}", "quiet") for n in range(3_000)])
        assert store._connection is not None
        store._connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)  # the old default
        found = store.search("quiet town", k=5_000)
        assert len(found) == 3_000
        assert found == exact_search(store.all(), "quiet town", k=5_000)
        long_query = " ".join(["quiet", *(f"word{n}" for n in range(1_200)), "Town 7"])
        assert store.search(long_query, k=3) == exact_search(store.all(), long_query, k=3)
    finally:
        store.close()
