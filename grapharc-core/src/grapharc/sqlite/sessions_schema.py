"""The session store's SQLite schema: core's session tables in SQLite's DDL, and the triggers that
keep the audit trail append-only.

The tables, their columns and indexes are ``grapharc.session.tables``'s (schema 1, then schema 2:
who created each thread, and the sign-in records; schema 3: each thread's own metadata), written with
``grapharc.sqlite.database.SQLITE``. The audit trail's rule (``AUDIT_TRAIL``: UPDATE refused
always, DELETE while its session exists) is enforced here with SQLite's own triggers.
"""

from __future__ import annotations

from grapharc.session.tables import (
    AUDIT_TRAIL,
    OWNERS_AND_SIGN_INS,
    SESSION_TABLES,
    THREAD_METADATA,
    AppendOnly,
    ddl,
)
from grapharc.sqlite.database import SQLITE

SCHEMA_VERSION = "1"
"""The version ``SCHEMA`` makes; ``MIGRATIONS`` bring it (and every file made before) up to date."""


def append_only(rule: AppendOnly) -> str:
    """SQLite triggers refusing every UPDATE of ``rule.table`` and a DELETE while its owner row exists."""
    return f"""\
CREATE TRIGGER IF NOT EXISTS {rule.table}_is_append_only BEFORE UPDATE ON {rule.table}
BEGIN
    SELECT RAISE(ABORT, '{rule.update_refused}');
END;
CREATE TRIGGER IF NOT EXISTS {rule.table}_outlives_no_session BEFORE DELETE ON {rule.table}
WHEN EXISTS (SELECT 1 FROM {rule.owner} WHERE {rule.key} = OLD.{rule.key})
BEGIN
    SELECT RAISE(ABORT, '{rule.delete_refused}');
END;
"""  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound


SCHEMA = ddl(SESSION_TABLES, SQLITE) + append_only(AUDIT_TRAIL)

MIGRATIONS = (("2", OWNERS_AND_SIGN_INS.statements(SQLITE)), ("3", THREAD_METADATA.statements(SQLITE)))
"""Each later version of the session store's schema, with the statements that make it from the one before."""
