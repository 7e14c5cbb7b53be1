"""Fresh PostgreSQL databases for the tests, emptied and renamed for the next test instead of dropped.

``DROP DATABASE`` waits for a checkpoint (one to five seconds each on a busy disk here) and
``CREATE DATABASE`` copies the template; a fresh database per test paid both. A database a test
has finished with is instead cut off (its connections ended), renamed to a name no test has
seen (so nothing left over from that test can reach it by its old name), and emptied of
everything the test made; it is handed to the next test only where a check of the catalogs
finds it as empty as a new one, and dropped otherwise. The spares are dropped at the end.
"""

from __future__ import annotations

import time
from uuid import uuid4

import psycopg
from psycopg import sql

PREFIX = "grapharc_test_"
CUT_OFF_TRIES = 200
"""Bound on waiting for a finished test's connections to end (10 ms apart) before dropping it."""

MADE_SCHEMAS = """SELECT nspname FROM pg_namespace WHERE nspname NOT IN ('pg_catalog', 'information_schema',
    'pg_toast') AND nspname NOT LIKE 'pg\\_temp\\_%' AND nspname NOT LIKE 'pg\\_toast\\_temp\\_%'"""
"""Every schema but the system's and the backends' temporary ones: public and what a test made."""

EMPTY = f"""
SELECT (SELECT count(*) FROM ({MADE_SCHEMAS}) AS made WHERE nspname <> 'public')
     + (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public')
     + (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public')
     + (SELECT count(*) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
        WHERE n.nspname = 'public')
     + (SELECT count(*) FROM pg_extension WHERE extname <> 'plpgsql')
     + (SELECT count(*) FROM pg_event_trigger)
     + (SELECT count(*) FROM pg_publication)
     + (SELECT count(*) FROM pg_largeobject_metadata)
     + (SELECT count(*) FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
        WHERE d.datname = current_database())
"""
"""Zero where the database holds nothing a test made: no schema but public, nothing in public, no
extension, event trigger, publication, large object or setting of its own."""


def _new_name() -> str:
    return f"{PREFIX}{uuid4().hex[:12]}"


class FreshDatabases:
    """Databases on the server whose admin URI is ``admin``, each handed to one test only."""

    def __init__(self, admin: str) -> None:
        self._admin = admin
        self._spares: list[str] = []

    def take(self) -> str:
        """The name of a database no test has used: an emptied spare, or a new one."""
        if self._spares:
            return self._spares.pop()
        name = _new_name()
        self._execute("CREATE DATABASE {}", name)
        return name

    def give_back(self, name: str) -> None:
        """A test is done with ``name``: keep it, empty and renamed, for the next test, or drop it."""
        renamed = self._cut_off(name)
        if renamed is None:
            self._execute("DROP DATABASE IF EXISTS {} WITH (FORCE)", name)
        elif self._emptied(renamed):
            self._spares.append(renamed)
        else:
            self._execute("DROP DATABASE IF EXISTS {} WITH (FORCE)", renamed)

    def close(self) -> None:
        """Drop every spare."""
        while self._spares:
            self._execute("DROP DATABASE IF EXISTS {} WITH (FORCE)", self._spares.pop())

    def _uri(self, name: str) -> str:
        return self._admin.rsplit("/", 1)[0] + "/" + name

    def _execute(self, statement: str, name: str) -> None:
        with psycopg.connect(self._admin, autocommit=True, connect_timeout=5) as conn:
            conn.execute(sql.SQL(statement).format(sql.Identifier(name)))

    def _cut_off(self, name: str) -> str | None:
        """End every connection to ``name`` and rename it; the new name, or None where connections
        kept coming back."""
        renamed = _new_name()
        with psycopg.connect(self._admin, autocommit=True, connect_timeout=5) as conn:
            for _ in range(CUT_OFF_TRIES):
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
                )
                try:
                    conn.execute(
                        sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                            sql.Identifier(name), sql.Identifier(renamed)
                        )
                    )
                except psycopg.errors.ObjectInUse:  # a backend was still on its way out
                    time.sleep(0.01)
                    continue
                return renamed
        return None

    def _emptied(self, name: str) -> bool:
        """Drop every schema the test made and recreate public as a new database has it, unlink its
        large objects and reset its settings; whether the catalogs then show nothing left."""
        with psycopg.connect(self._uri(name), autocommit=True, connect_timeout=5) as conn:
            made = [row[0] for row in conn.execute(MADE_SCHEMAS)]
            with conn.transaction():
                for schema in made:
                    conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
                conn.execute("CREATE SCHEMA public AUTHORIZATION pg_database_owner")
                conn.execute("COMMENT ON SCHEMA public IS 'standard public schema'")
                conn.execute("GRANT USAGE ON SCHEMA public TO PUBLIC")
                conn.execute("SELECT lo_unlink(oid) FROM pg_largeobject_metadata")
                conn.execute(sql.SQL("ALTER DATABASE {} RESET ALL").format(sql.Identifier(name)))
            left = conn.execute(EMPTY).fetchone()
        return left is not None and left[0] == 0
