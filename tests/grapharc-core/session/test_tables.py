"""The session and run tables are described once (``grapharc.session.tables``) and a new SQLite file
made from the description has the schema the released, hand-written DDL made, which existing files
hold: the same tables, columns, keys, checks, indexes (partial ones included) and triggers."""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import sqlite_released

from grapharc.runs.tables import RUN_TABLES
from grapharc.session import sql_dialect
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


def released(path: Path, ddl: str) -> Path:
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript(ddl)
    return path


@pytest.mark.parametrize(("store", "ddl"), [(SqliteSessionStore, sqlite_released.SESSIONS),
                                            (SqliteRunStore, sqlite_released.RUNS)],
                         ids=["sessions", "runs"])
def test_a_new_file_gets_the_schema_the_released_ddl_made(tmp_path, store, ddl):
    store(tmp_path / "new.db").close()
    assert schema_of(tmp_path / "new.db") == schema_of(released(tmp_path / "released.db", ddl))


def test_one_file_holding_both_stores_gets_both_released_schemas(tmp_path):
    SqliteSessionStore(tmp_path / "both.db").close()
    SqliteRunStore(tmp_path / "both.db").close()
    reference = released(tmp_path / "released.db", sqlite_released.SESSIONS)
    assert schema_of(tmp_path / "both.db") == schema_of(released(reference, sqlite_released.RUNS))


def test_a_file_the_released_ddl_made_opens_and_works(tmp_path):
    path = released(tmp_path / "sessions.db", sqlite_released.SESSIONS)
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("INSERT INTO meta (key, value) VALUES ('schema', '1')")
    store = SqliteSessionStore(path)
    try:
        store.create("t1", "g", 1.0)
        assert [entry.kind for entry in store.audit("t1")] == ["created"]
    finally:
        store.close()


def test_the_statements_name_the_tables_the_description_has():
    assert tuple(table.name for table in SESSION_TABLES) == sql_dialect.TABLES
    assert tuple(table.name for table in RUN_TABLES) == sql_dialect.RUN_TABLES
