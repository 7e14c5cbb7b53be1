"""The session store's tables, described once for every SQL dialect, and how any table is described.

``SESSION_TABLES`` (sessions, approvals, events and the audit trail, with ``AUDIT_TRAIL``'s
append-only rule), and the run queue's table in :mod:`grapharc.runs.tables`, name each
column, its type, key and constraints, and each index, in words no database owns. ``ddl``
writes them in a dialect: core's SQLite stores render them with
``grapharc.sqlite.database.SQLITE``, grapharc-postgres with its own ``DdlDialect`` in its
migrations. Only what the dialects truly do differently
stays with each: the SQL of the triggers that enforce the audit trail's rule.

``SESSION_TABLES`` are the tables as released (the SQLite stores' schema version 1, PostgreSQL's
migrations 1 and 3), which existing databases hold: a change needs a migration in each dialect, not
an edit there (tests compare the schema the rendered DDL makes with the released DDL's). The one
change since, ``OWNERS_AND_SIGN_INS`` (who created each thread, and the server's sign-in records),
is described below and applied as SQLite's schema 2 and PostgreSQL's migration 4; the next,
``THREAD_METADATA`` (a thread's own JSON metadata), as SQLite's schema 3 and PostgreSQL's migration 5.

Rendered here rather than by SQLAlchemy Core's ``CreateTable``: core does not depend on
SQLAlchemy, and the released DDL must come out as it was (SQLite even keeps each statement's
text), which a renderer of forty lines does for the two dialects these tables live in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from grapharc.session.records import APPROVED, DECLINED, GATE, INTERRUPT, LAPSED, OPEN, STATUSES, SUPERSEDED


class Type(Enum):
    """What a column holds, which each dialect writes its own way."""

    TEXT = "text"
    INTEGER = "integer"
    SEQUENCE = "sequence"
    """A row number of another table (its counter), which may outgrow 32 bits."""
    REAL = "real"
    """A float: seconds since the epoch."""
    JSON = "json"
    """A JSON document (text in SQLite, read back as Python values in PostgreSQL)."""
    FLAG = "flag"
    """True or false."""
    COUNTER = "counter"
    """The table's key, counted up by the database on each insert and never reused."""
    INSERTION_ORDER = "insertion order"
    """The order rows were added in, for reading them oldest first: SQLite keeps it (``rowid``)
    without a column, PostgreSQL in a column of its own."""


@dataclass(frozen=True)
class Column:
    """One column: ``required`` is NOT NULL, ``one_of`` the only values it may hold."""

    name: str
    type: Type
    required: bool = False
    key: bool = False
    unique: bool = False
    default: int | bool | None = None
    one_of: tuple[str, ...] = ()


@dataclass(frozen=True)
class Index:
    """An index of its table; with ``where``, of the rows that condition (plain SQL) selects only."""

    name: str
    columns: tuple[str, ...]
    unique: bool = False
    where: str | None = None


@dataclass(frozen=True)
class Table:
    """A table: its columns in order, and its indexes."""

    name: str
    columns: tuple[Column, ...]
    indexes: tuple[Index, ...] = ()


@dataclass(frozen=True)
class AppendOnly:
    """A table whose rows are never updated, and deleted only once the ``owner`` row with the same
    ``key`` is gone; each dialect enforces it with triggers, refusing with these messages."""

    table: str
    owner: str
    key: str
    update_refused: str
    delete_refused: str


@dataclass(frozen=True)
class DdlDialect:
    """How a database writes the description: each ``Type`` (None: no column, the database keeps
    it another way), the tables' name prefix, whether its statements may run again on tables that
    exist (``IF NOT EXISTS``), and its false and true."""

    types: Mapping[Type, str | None]
    prefix: str = ""
    repeatable: bool = False
    booleans: tuple[str, str] = ("false", "true")


def _values(values: tuple[str, ...]) -> str:
    return ", ".join(f"'{value}'" for value in values)


def _column(column: Column, dialect: DdlDialect) -> str | None:
    written = dialect.types[column.type]
    if written is None:
        return None
    clauses = [column.name, written]
    if column.key:
        clauses.append("PRIMARY KEY")
    if column.required:
        clauses.append("NOT NULL")
    if column.unique:
        clauses.append("UNIQUE")
    if isinstance(column.default, bool):
        clauses.append(f"DEFAULT {dialect.booleans[column.default]}")
    elif column.default is not None:
        clauses.append(f"DEFAULT {column.default}")
    if column.one_of:
        clauses.append(f"CHECK ({column.name} IN ({_values(column.one_of)}))")
    return " ".join(clauses)


def ddl(tables: tuple[Table, ...], dialect: DdlDialect) -> str:
    """The statements that create ``tables`` and their indexes in ``dialect``, one per line or block."""
    return "\n".join(ddl_statements(tables, dialect)) + "\n"


def ddl_statements(tables: tuple[Table, ...], dialect: DdlDialect) -> list[str]:
    """The statements that create ``tables`` and their indexes in ``dialect``, one string each."""
    exists = " IF NOT EXISTS" if dialect.repeatable else ""
    statements = []
    for table in tables:
        columns = [written for column in table.columns if (written := _column(column, dialect))]
        body = ",\n    ".join(columns)
        statements.append(f"CREATE TABLE{exists} {dialect.prefix}{table.name} (\n    {body}\n);")
        for index in table.indexes:
            unique = "UNIQUE " if index.unique else ""
            where = f" WHERE {index.where}" if index.where else ""
            statements.append(f"CREATE {unique}INDEX{exists} {dialect.prefix}{index.name} ON "
                              f"{dialect.prefix}{table.name} ({', '.join(index.columns)}){where};")
    return statements


SESSION_TABLES = (
    Table("sessions", (
        Column("thread_id", Type.TEXT, key=True),
        Column("graph", Type.TEXT, required=True),
        Column("status", Type.TEXT, required=True, one_of=STATUSES),
        Column("created_at", Type.REAL, required=True),
        Column("updated_at", Type.REAL, required=True),
        Column("runner", Type.TEXT),
        Column("lease_token", Type.TEXT),
        Column("lease_expires_at", Type.REAL),
        Column("turn", Type.JSON),
        Column("outcome", Type.TEXT),
        Column("error", Type.TEXT),
        Column("audited_step", Type.INTEGER, required=True, default=-1),
    ), (Index("sessions_by_status", ("status", "updated_at")),)),
    Table("approvals", (
        Column("seq", Type.INSERTION_ORDER),
        Column("approval_id", Type.TEXT, key=True),
        Column("thread_id", Type.TEXT, required=True),
        Column("kind", Type.TEXT, required=True, one_of=(GATE, INTERRUPT)),
        Column("node", Type.TEXT, required=True),
        Column("hold_key", Type.TEXT, required=True),
        Column("question", Type.TEXT, required=True),
        Column("digest", Type.TEXT, required=True),
        Column("deciders", Type.JSON, required=True),
        Column("created_at", Type.REAL, required=True),
        Column("expires_at", Type.REAL),
        Column("state", Type.TEXT, required=True, one_of=(OPEN, APPROVED, DECLINED, SUPERSEDED, LAPSED)),
        Column("decided_by", Type.TEXT),
        Column("decided_at", Type.REAL),
    ), (Index("approvals_by_thread", ("thread_id", "state")),)),
    Table("events", (
        Column("event_id", Type.COUNTER),
        Column("thread_id", Type.TEXT, required=True),
        Column("kind", Type.TEXT, required=True),
        Column("payload", Type.JSON, required=True),
        Column("posted_at", Type.REAL, required=True),
        Column("delivered_at", Type.REAL),
        Column("turn_id", Type.TEXT),
    ), (Index("events_by_thread", ("thread_id", "delivered_at")),)),
    Table("audit", (
        Column("seq", Type.COUNTER),
        Column("thread_id", Type.TEXT, required=True),
        Column("at", Type.REAL, required=True),
        Column("kind", Type.TEXT, required=True),
        Column("node", Type.TEXT),
        Column("step", Type.INTEGER),
        Column("task_id", Type.TEXT),
        Column("detail", Type.JSON, required=True),
    ), (
        Index("audit_by_thread", ("thread_id", "seq")),
        Index("audit_node_once", ("thread_id", "step", "node", "task_id"), unique=True,
              where="kind = 'node'"),
        Index("audit_run_once", ("thread_id", "task_id"), unique=True, where="kind = 'run'"),
    )),
)
"""The session store's tables. A node's completion is recorded once per (thread, step, node, task),
so a node re-run after a crash inserts nothing new; a run's once per (thread, task)."""

AUDIT_TRAIL = AppendOnly("audit", owner="sessions", key="thread_id",
                         update_refused="the audit trail is append-only",
                         delete_refused="the audit trail of a live session cannot be deleted")
"""The audit trail refuses UPDATE always and DELETE while its session exists, so only retention
(which removes the session row first) can shorten it."""


@dataclass(frozen=True)
class Change:
    """Columns added to tables that exist, and tables added beside them: one step of the schema."""

    columns: tuple[tuple[str, Column], ...]
    """(table, column) pairs, each added to its table."""
    tables: tuple[Table, ...] = ()

    def statements(self, dialect: DdlDialect) -> list[str]:
        """The change in ``dialect``, one statement a string (none repeatable: run it once)."""
        once = DdlDialect(dialect.types, dialect.prefix, False, dialect.booleans)
        added = [f"ALTER TABLE {dialect.prefix}{table} ADD COLUMN {_column(column, dialect)};"
                 for table, column in self.columns]
        return [*added, *ddl_statements(self.tables, once)]


SIGN_IN_TABLES = (
    Table("sign_in_revoked", (
        Column("nonce", Type.TEXT, key=True),
        Column("expires_at", Type.REAL, required=True),
    ), (Index("sign_in_revoked_by_expiry", ("expires_at",)),)),
    Table("sign_in_failures", (
        Column("subject", Type.TEXT, required=True),
        Column("at", Type.REAL, required=True),
    ), (Index("sign_in_failures_by_subject", ("subject", "at")), Index("sign_in_failures_by_time", ("at",)))),
)
"""What a server's sign-in pages keep where all its workers see it: the page sessions signed out
before they expired (by nonce), and recent failed sign-ins (by user or address), which throttle
the next ones."""

OWNERS_AND_SIGN_INS = Change(
    columns=(("sessions", Column("owner", Type.TEXT)), ("sessions", Column("tenant", Type.TEXT))),
    tables=SIGN_IN_TABLES,
)
"""Who created each thread and their tenant (NULL for a thread created before, or without a user:
the CLI's), and the sign-in records: SQLite's schema 2, PostgreSQL's migration 4."""

THREAD_METADATA = Change(columns=(("sessions", Column("metadata", Type.JSON)),))
"""A thread's own metadata, a JSON object a client sets and merges into (NULL for a thread created
before, read as empty): SQLite's schema 3, PostgreSQL's migration 5."""
