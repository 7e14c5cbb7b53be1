"""SQLiteMemoryStore keeps the ClaimStore contract on disk, across processes and crashes."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from grapharc.errors import ConfigurationError
from grapharc.memory.claims import ClaimStoreError
from grapharc.memory.sqlite.store import SQLiteMemoryStore, open_claim_store
from grapharc.testing.claim_store_kit import ClaimStoreConformance, assert_exact_top_k, make_claim

WRITER = """
import json, sys
from grapharc.memory.sqlite.store import SQLiteMemoryStore
from grapharc.testing.claim_store_kit import make_claim

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
from grapharc.testing.claim_store_kit import make_claim

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
            ("claims", 2)
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
    with pytest.raises(ClaimStoreError, match=r"version 7.*reads version 2"):
        SQLiteMemoryStore(path)


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


def test_a_version_1_file_gains_a_search_index_over_the_claims_it_holds(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SQLiteMemoryStore(path)
    old = store.add(make_claim("東京", "8 million", predicate="population"))
    new = store.supersede(old.id, make_claim("東京", "14 million", predicate="population"))
    store.add(make_claim("Kyoto", "1.5 million", predicate="population"))
    store.close()
    raw = sqlite3.connect(path)
    raw.execute("DROP TABLE claims_fts")
    raw.execute("UPDATE schema_versions SET version = 1 WHERE component = 'claims'")
    raw.commit()
    raw.close()
    migrated = SQLiteMemoryStore(path)
    try:
        assert [hit.claim for hit in migrated.search("東京")] == [new]
        assert_exact_top_k(migrated, "population million", k=3, include_superseded=True)
    finally:
        migrated.close()
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("SELECT version FROM schema_versions").fetchone() == (2,)
    finally:
        raw.close()


def test_search_reads_the_full_text_index_and_claims_by_key_only(tmp_path: Path) -> None:
    store = SQLiteMemoryStore(tmp_path / "memory.db")
    store.add(make_claim("Tokyo"))
    plans: list[str] = []
    connection = store._connection
    assert connection is not None
    original = connection.execute

    class Spy:
        def execute(self, sql: str, parameters: tuple[object, ...] = ()) -> sqlite3.Cursor:
            plans.extend(row[3] for row in original(f"EXPLAIN QUERY PLAN {sql}", parameters))
            return original(sql, parameters)

    store._connection = Spy()  # type: ignore[assignment]
    try:
        assert len(store.search("Tokyo")) == 1
    finally:
        store._connection = connection
        store.close()
    assert any(plan.startswith("SCAN claims_fts VIRTUAL TABLE") for plan in plans)
    assert "SEARCH c USING INTEGER PRIMARY KEY (rowid=?)" in plans
    assert not any(plan.startswith(("SCAN c ", "SCAN claims ")) for plan in plans)
