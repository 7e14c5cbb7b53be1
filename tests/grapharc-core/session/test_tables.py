"""The session and run tables are described once (``grapharc.session.tables``) and a new SQLite file
made from the description has the schema the released, hand-written DDL made, which existing files
hold, once brought up to date by the store's migrations (sessions schema 2: thread owners, sign-in
records; 3: a thread's own metadata; runs schema 2: the runs' live event logs; 3: a run's
not-before time): the same tables, columns, keys, checks, indexes (partial ones included) and
triggers; an old file keeps its data."""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import sqlite_released

from grapharc.runs.records import INSERT_COLUMNS, RunRecord, row_values
from grapharc.runs.tables import LIVE_LOG_TABLES, RUN_TABLES
from grapharc.session import sql_dialect
from grapharc.session.errors import SessionStoreError
from grapharc.session.tables import SESSION_TABLES
from grapharc.sqlite.runs import SqliteRunStore
from grapharc.sqlite.sessions import SqliteSessionStore


def _normalised(sql: str) -> str:
    """``sql`` with its layout (line breaks, indentation, spaces inside parentheses) taken out."""
    return re.sub(r"\s+\)", ")", re.sub(r"\(\s+", "(", " ".join(sql.split())))


def schema_of(path: Path) -> dict[str, Any]:
    """Everything SQLite says of the file's schema: each object's statement, each table's columns
    (type, NOT NULL, default, key) and each index's columns, uniqueness and origin."""
    with closing(sqlite3.connect(path)) as conn:
        objects = {name: (kind, table, _normalised(sql or "")) for kind, name, table, sql in
                   conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")}
        tables = [name for name, (kind, _, _) in objects.items() if kind == "table"]
        return {
            "objects": objects,
            "columns": {table: conn.execute(f"PRAGMA table_xinfo({table})").fetchall() for table in tables},
            "indexes": {table: conn.execute(f"PRAGMA index_list({table})").fetchall() for table in tables},
            "indexed": {name: conn.execute(f"PRAGMA index_xinfo({name})").fetchall()
                        for name, (kind, _, _) in objects.items() if kind == "index"},
        }


def released(path: Path, ddl: str, *, key: str | None = None) -> Path:
    """A file the released ``ddl`` made (``key``: with its version, 1, in ``meta`` as a store wrote it)."""
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.executescript(ddl)
        if key is not None:
            conn.execute("INSERT INTO meta (key, value) VALUES (?, '1')", (key,))
    return path


def migrated(path: Path) -> Path:
    """A released session store file as opening it leaves it: brought up to date."""
    SqliteSessionStore(released(path, sqlite_released.SESSIONS, key="schema")).close()
    return path


def migrated_runs(path: Path) -> Path:
    """A released run store file (in ``path``, which may hold the session tables) brought up to date."""
    SqliteRunStore(released(path, sqlite_released.RUNS, key="runs_schema")).close()
    return path


def test_a_new_file_gets_the_schema_of_a_released_file_brought_up_to_date(tmp_path):
    SqliteSessionStore(tmp_path / "new.db").close()
    assert schema_of(tmp_path / "new.db") == schema_of(migrated(tmp_path / "released.db"))


def test_a_new_run_store_file_gets_the_schema_of_a_released_file_brought_up_to_date(tmp_path):
    SqliteRunStore(tmp_path / "new.db").close()
    assert schema_of(tmp_path / "new.db") == schema_of(migrated_runs(tmp_path / "released.db"))


def test_one_file_holding_both_stores_gets_both_released_schemas(tmp_path):
    SqliteSessionStore(tmp_path / "both.db").close()
    SqliteRunStore(tmp_path / "both.db").close()
    reference = migrated_runs(migrated(tmp_path / "released.db"))
    assert schema_of(tmp_path / "both.db") == schema_of(reference)


def test_a_run_store_file_the_released_ddl_made_opens_keeps_its_runs_and_works(tmp_path):
    path = released(tmp_path / "runs.db", sqlite_released.RUNS, key="runs_schema")
    old = RunRecord("old", "t1", "g", {"kind": "start", "input": {}}, 1.0, 1.0)
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(f"INSERT INTO runs ({', '.join(INSERT_COLUMNS[:-2])}) VALUES "  # not not_before, webhook
                     f"({', '.join('?' for _ in INSERT_COLUMNS[:-2])})", row_values(old)[:-2])
    store = SqliteRunStore(path)
    try:
        assert (store.get("t1", "old").status, store.get("t1", "old").not_before,
                store.get("t1", "old").webhook) == ("pending", None, False)
        store.add(RunRecord("later", "t2", "g", {}, 1.0, 1.0, not_before=5.0), exclusive=True)
        assert store.claim_next("w", 2.0, 10.0, ("g",)).run_id == "old"
        assert store.claim_next("w", 2.0, 10.0, ("g",)) is None  # "later" waits until 5.0
        assert store.claim_next("w", 5.0, 10.0, ("g",)).run_id == "later"
    finally:
        store.close()
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'runs_schema'").fetchone() == ("4",)


def test_a_file_the_released_ddl_made_opens_and_works(tmp_path):
    path = released(tmp_path / "sessions.db", sqlite_released.SESSIONS, key="schema")
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("INSERT INTO sessions (thread_id, graph, status, created_at, updated_at) "
                     "VALUES ('old', 'g', 'created', 1.0, 1.0)")
    store = SqliteSessionStore(path)
    try:
        store.create("t1", "g", 1.0, owner="alice", tenant="acme", metadata={"team": "credit"})
        assert [entry.kind for entry in store.audit("t1")] == ["created"]
        assert (store.get("t1").owner, store.get("t1").tenant) == ("alice", "acme")
        assert store.get("t1").metadata == {"team": "credit"}
        assert (store.get("old").owner, store.get("old").tenant) == (None, None)  # made before: no owner
        assert store.get("old").metadata == {}  # nor metadata, until a client merges some in
        assert store.update_metadata("old", {"team": "desk"}, 2.0, by="ana").metadata == {"team": "desk"}
    finally:
        store.close()
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("3",)


def test_a_file_of_a_newer_schema_is_refused_naming_both_versions(tmp_path):
    path = released(tmp_path / "sessions.db", sqlite_released.SESSIONS, key="schema")
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("UPDATE meta SET value = '9' WHERE key = 'schema'")
    with pytest.raises(SessionStoreError, match="has schema 9; this GraphARC reads schema 3"):
        SqliteSessionStore(path)


def test_the_statements_name_the_tables_the_description_has():
    assert tuple(table.name for table in SESSION_TABLES) == sql_dialect.TABLES
    assert tuple(table.name for table in (*RUN_TABLES, *LIVE_LOG_TABLES)) == sql_dialect.RUN_TABLES
