"""The test databases handed out by fresh_databases.py: a database a test is done with comes back to
the next test under a new name and as empty as a new one, or is dropped where it cannot be emptied."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from fresh_databases import EMPTY, FreshDatabases


@pytest.fixture
def databases(postgres_server: str) -> Iterator[FreshDatabases]:
    made = FreshDatabases(postgres_server)
    yield made
    made.close()


def uri(admin: str, name: str) -> str:
    return admin.rsplit("/", 1)[0] + "/" + name


def oid(admin: str, name: str) -> int | None:
    """The database's object id (kept by a rename), or None where no database has that name."""
    with psycopg.connect(admin, autocommit=True) as conn:
        row = conn.execute("SELECT oid FROM pg_database WHERE datname = %s", (name,)).fetchone()
        return None if row is None else int(row[0])


def exists(admin: str, name: str) -> bool:
    return oid(admin, name) is not None


def test_a_used_database_comes_back_renamed_cut_off_and_empty(databases, postgres_server):
    first = databases.take()
    database = oid(postgres_server, first)
    with psycopg.connect(uri(postgres_server, first), autocommit=True) as conn:
        assert conn.execute(EMPTY).fetchone() == (0,)  # a new database counts as empty
        conn.execute("CREATE TABLE runs (id int)")
        conn.execute("CREATE SCHEMA extra")
        conn.execute("CREATE TABLE extra.items (id serial)")
        conn.execute("CREATE TYPE mood AS ENUM ('calm')")
        conn.execute("CREATE FUNCTION one() RETURNS int LANGUAGE sql AS 'SELECT 1'")
        conn.execute("SELECT lo_create(0)")
        conn.execute(f"ALTER DATABASE {first} SET work_mem = '8MB'")
    left_open = psycopg.connect(uri(postgres_server, first), autocommit=True)  # the test never closed it

    databases.give_back(first)

    with pytest.raises(psycopg.OperationalError):
        left_open.execute("SELECT 1")
    left_open.close()
    second = databases.take()
    assert second != first and not exists(postgres_server, first)
    assert oid(postgres_server, second) == database  # the same database, emptied rather than made anew
    with psycopg.connect(uri(postgres_server, second), autocommit=True) as conn:
        assert conn.execute(EMPTY).fetchone() == (0,)
        owner = conn.execute("SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'public'")
        assert owner.fetchone() == ("pg_database_owner",)  # public as a new database has it
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(uri(postgres_server, first), connect_timeout=5)  # the old name reaches nothing
    databases.give_back(second)


def test_a_database_that_cannot_be_emptied_is_dropped_and_never_handed_out(databases, postgres_server):
    first = databases.take()
    with psycopg.connect(uri(postgres_server, first), autocommit=True) as conn:
        conn.execute("CREATE PUBLICATION everything FOR ALL TABLES")  # outside every schema
    databases.give_back(first)

    second = databases.take()
    with psycopg.connect(uri(postgres_server, second), autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM pg_publication").fetchone() == (0,)
    assert not exists(postgres_server, first)
    databases.give_back(second)
    databases.close()
    assert not exists(postgres_server, second)
