"""``SQLiteMemoryStore``: durable claims in one SQLite file, shared safely between processes.

The file is in WAL mode with ``synchronous=FULL``, so readers in other
processes never block the writer and a committed claim survives a crash.
Claims are insert-only rows; a correction is a row in ``supersessions``
(``old_id`` is its primary key, so a claim is superseded at most once, even by
racing processes), and triggers refuse UPDATE and DELETE on both tables. A
supersession writes the new claim and its link in one ``BEGIN IMMEDIATE``
transaction, so a crash leaves both or neither. Every write also adds the
claims' terms, impact-ordered postings and statistics (``postings``) in the
same transaction, and ``search`` walks them with ``impact_walk`` inside one
read transaction: it returns exactly ``bm25f.exact_search``'s top k while
reading about k claims plus those holding several query terms in the best
groups, and only the winners are read from ``claims``. ``add_many`` writes a
batch in one transaction. ``schema_versions`` records the layout per
component so a later GraphARC can migrate the file (and an older one refuses
a newer file instead of misreading it). Version 3 replaced version 2's FTS5
table with postings (FTS5's ``bm25()`` scores every row matching a query, so
its cost grew with a common term's postings); version 4 writes them as
append-only runs, since version 3's term-first key made a batch's writes
spread over the whole table; version 5 drops the index on ``claims``'
subject key for the same reason (a batch's subjects landed all over it: at
97k zipf claims 410 of the 566 pages a batch of 1,000 wrote) and keeps the
subject keys in the runs instead (``subject_keys``). A version 1 to 4 file is
migrated on open, in one transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from grapharc.memory.bm25f import check_k
from grapharc.memory.claims import (
    Claim,
    ClaimAlreadySupersededError,
    ClaimNotFoundError,
    ClaimStoreClosedError,
    ClaimStoreError,
    DuplicateClaimError,
    Provenance,
    ScoredClaim,
    check_limit,
    check_new_batch,
    durable_store_path,
    normalise_entity,
)
from grapharc.memory.impact_walk import impact_search
from grapharc.memory.sqlite import postings
from grapharc.memory.sqlite.database import (
    IN_JSON_LIST,
    SQLiteFileStore,
    insert_rows,
    json_list,
    read_through_memory_map,
    record_version,
    snapshot,
    use_wal,
)

SCHEMA_COMPONENT = "claims"
SCHEMA_VERSION = 5

_ID_CHUNK = 500  # ids per "id IN (...)" probe when adding, under the old parameter limit of 999

_SCHEMA = (
    """CREATE TABLE claims (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        subject TEXT NOT NULL,
        subject_key TEXT NOT NULL,
        predicate TEXT NOT NULL,
        object TEXT NOT NULL,
        source TEXT NOT NULL,
        observed_at TEXT NOT NULL,
        run_id TEXT
    )""",
    """CREATE TABLE supersessions (
        old_id TEXT PRIMARY KEY REFERENCES claims (id),
        new_id TEXT NOT NULL UNIQUE REFERENCES claims (id)
    )""",
    *(
        f"CREATE TRIGGER {table}_are_never_{verb}d BEFORE {verb.upper()} ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{table} are append-only; supersede instead'); END"
        for table in ("claims", "supersessions")
        for verb in ("update", "delete")
    ),
    *postings.SCHEMA,
)

_CLAIM_ROW = (
    "c.id, c.subject, c.predicate, c.object, c.source, c.observed_at, c.run_id, s.new_id "
    "FROM claims AS c LEFT JOIN supersessions AS s ON s.old_id = c.id"
)  # a ``_Row``, after whatever the statement selects before it
_SELECT = f"SELECT {_CLAIM_ROW}"

_HISTORY = f"""
WITH RECURSIVE
    back (id, depth) AS (
        SELECT ?, 0
        UNION ALL
        SELECT s.old_id, back.depth + 1 FROM supersessions AS s JOIN back ON s.new_id = back.id
    ),
    root (id) AS (SELECT id FROM back ORDER BY depth DESC LIMIT 1),
    forward (id, depth) AS (
        SELECT id, 0 FROM root
        UNION ALL
        SELECT s.new_id, forward.depth + 1
        FROM supersessions AS s JOIN forward ON s.old_id = forward.id
    )
{_SELECT} JOIN forward ON forward.id = c.id ORDER BY forward.depth
"""  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound

_CLAIM_COLUMNS = ("seq", "id", "subject", "subject_key", "predicate", "object", "source",
                  "observed_at", "run_id")

_Row = tuple[str, str, str, str, str, str, str | None, str | None]


def _to_claim(row: _Row) -> Claim:
    claim_id, subject, predicate, obj, source, observed_at, run_id, superseded_by = row
    provenance = Provenance(
        source=source, observed_at=datetime.fromisoformat(observed_at), run_id=run_id
    )
    return Claim(
        id=claim_id,
        subject=subject,
        predicate=predicate,
        object=obj,
        provenance=provenance,
        superseded_by=superseded_by,
    )


def _rows(numbered: Sequence[tuple[int, Claim]]) -> list[tuple[object, ...]]:
    """The claims' rows, normalising each distinct subject and formatting each distinct time
    once (a batch repeats subjects, and claims observed together share a time; every time is
    in UTC, so equal times format alike)."""
    keys: dict[str, str] = {}
    times: dict[datetime, str] = {}
    rows: list[tuple[object, ...]] = []
    for seq, claim in numbered:
        key = keys.get(claim.subject)
        if key is None:
            key = keys[claim.subject] = claim.subject_key
        provenance = claim.provenance
        observed_at = times.get(provenance.observed_at)
        if observed_at is None:
            observed_at = times[provenance.observed_at] = provenance.observed_at.isoformat()
        rows.append((seq, claim.id, claim.subject, key, claim.predicate, claim.object,
                     provenance.source, observed_at, provenance.run_id))
    return rows


def _require_json(connection: sqlite3.Connection, path: Path) -> None:
    """Refuse an SQLite without JSON functions: the postings are built and read with ``json_each``."""
    try:
        connection.execute("SELECT count(*) FROM json_each('{}')").fetchone()
    except sqlite3.DatabaseError as error:
        raise ClaimStoreError(
            f"claim store {str(path)!r} needs SQLite's JSON functions, which this SQLite "
            f"{sqlite3.sqlite_version} lacks ({error})",
            hint="use a Python whose sqlite3 module links SQLite 3.38 or newer "
            "(or an older one built with JSON1)",
        ) from error


class SQLiteMemoryStore(SQLiteFileStore):
    """A durable ``ClaimStore`` in one SQLite file; several processes may share the file."""

    noun = "claim store"
    closed_error = ClaimStoreClosedError

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        try:
            self._connect()
            self._prepare()
        except sqlite3.Error as error:
            self.close()
            raise ClaimStoreError(
                f"cannot open claim store {str(self.path)!r}: {error}",
                hint="give the path of a SQLite file (it is created if missing) "
                "in an existing, writable directory",
            ) from error
        except ClaimStoreError:
            self.close()
            raise

    def _prepare(self) -> None:
        """Switch the file to WAL and create or check the claims schema."""
        connection = self._open_connection()
        use_wal(connection, f"claim store {str(self.path)!r}", ClaimStoreError)
        read_through_memory_map(connection)
        _require_json(connection, self.path)
        connection.execute("PRAGMA foreign_keys=ON")
        with self._transaction() as cursor:
            if self._create_or_check(cursor, SCHEMA_COMPONENT, SCHEMA_VERSION, _SCHEMA, ClaimStoreError,
                                     migratable=(1, 2, 3, 4)):
                self._migrate_to_runs(cursor)

    @staticmethod
    def _migrate_to_runs(cursor: sqlite3.Cursor) -> None:
        """Migrate a version 1 to 4 file: drop the search index it had, if any (2: an FTS5
        table; 3: postings keyed by term first; 4: runs without subject keys) and the index on
        ``claims``' subject key, and index the claims it holds as one run."""
        cursor.execute("DROP INDEX IF EXISTS claims_by_subject_key")
        for table in ("claims_fts", "claim_terms", "runs", "postings", "term_groups",
                      "claim_totals"):
            cursor.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in postings.SCHEMA:
            cursor.execute(statement)
        rows = cursor.execute(
            "SELECT seq, id, subject, predicate, object, source, observed_at, run_id "
            "FROM claims ORDER BY seq").fetchall()
        postings.index_claims(cursor, [(seq, _to_claim((*fields, None))) for seq, *fields in rows])
        record_version(cursor, SCHEMA_COMPONENT, SCHEMA_VERSION)

    def _read(self, sql: str, parameters: tuple[str | int, ...] = ()) -> list[Claim]:
        with self._lock:
            rows = self._open_connection().execute(sql, parameters).fetchall()
        return [_to_claim(row) for row in rows]

    @staticmethod
    def _refuse_unstorable(cursor: sqlite3.Cursor, claims: Sequence[Claim]) -> None:
        """Raise for the first claim that is marked superseded, repeated, or already stored."""
        check_new_batch(claims)
        ids = [claim.id for claim in claims]
        for start in range(0, len(ids), _ID_CHUNK):
            chunk = ids[start:start + _ID_CHUNK]
            taken = {row[0] for row in cursor.execute(
                f"SELECT id FROM claims WHERE id IN ({', '.join('?' * len(chunk))})", chunk)}  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
            if taken:
                raise DuplicateClaimError(next(i for i in chunk if i in taken))

    def _insert_all(self, cursor: sqlite3.Cursor, claims: Sequence[Claim]) -> None:
        """Insert new claims and index them; the caller holds the write transaction."""
        self._refuse_unstorable(cursor, claims)
        row = cursor.execute("SELECT seq FROM sqlite_sequence WHERE name = 'claims'").fetchone()
        first = (row[0] if row else 0) + 1
        numbered = list(enumerate(claims, start=first))
        insert_rows(cursor, "claims", _CLAIM_COLUMNS, _rows(numbered))
        postings.index_claims(cursor, numbered)

    def add(self, claim: Claim) -> Claim:
        """Store a new claim; see ``ClaimStore.add``."""
        with self._lock, self._transaction() as cursor:
            self._insert_all(cursor, [claim])
        return claim

    def add_many(self, claims: Sequence[Claim]) -> list[Claim]:
        """Store several new claims in one transaction; see ``ClaimStore.add_many``."""
        with self._lock, self._transaction() as cursor:
            self._insert_all(cursor, claims)
        return list(claims)

    def get(self, claim_id: str) -> Claim:
        """Return the claim with this id; see ``ClaimStore.get``."""
        found = self._read(f"{_SELECT} WHERE c.id = ?", (claim_id,))
        if not found:
            raise ClaimNotFoundError(claim_id)
        return found[0]

    def supersede(self, old_id: str, new_claim: Claim) -> Claim:
        """Record ``new_claim`` as the correction of ``old_id`` in one transaction."""
        with self._lock, self._transaction() as cursor:
            row = cursor.execute(
                "SELECT s.new_id FROM claims AS c LEFT JOIN supersessions AS s "
                "ON s.old_id = c.id WHERE c.id = ?",
                (old_id,),
            ).fetchone()
            if row is None:
                raise ClaimNotFoundError(old_id)
            if row[0] is not None:
                raise ClaimAlreadySupersededError(old_id, row[0])
            self._insert_all(cursor, [new_claim])
            cursor.execute(
                "INSERT INTO supersessions (old_id, new_id) VALUES (?, ?)",
                (old_id, new_claim.id),
            )
        return new_claim

    def about(self, subject: str, limit: int | None = None) -> list[Claim]:
        """Return current claims about ``subject``; see ``ClaimStore.about``. The subject's
        claims are one key range in each run of ``subject_keys``, read by its primary key run
        after run (run ids ascend with seqs, so that is seq order and SQLite stops at
        ``limit`` instead of sorting every claim about a common subject)."""
        key = normalise_entity(subject)
        check_limit(limit)
        return self._read(
            f"{_SELECT} JOIN subject_keys AS k ON k.seq = c.seq "  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
            f"WHERE k.run IN (SELECT run FROM runs) AND k.subject_key = ? "
            f"AND s.new_id IS NULL ORDER BY k.run, k.seq LIMIT ?",
            (key, -1 if limit is None else limit),
        )

    def history(self, claim_id: str) -> list[Claim]:
        """Return the correction chain ``claim_id`` is in, oldest first, via a recursive query."""
        chain = self._read(_HISTORY, (claim_id,))
        if not chain:
            raise ClaimNotFoundError(claim_id)
        return chain

    def all(self, include_superseded: bool = False) -> list[Claim]:
        """Return current claims, or every claim if ``include_superseded``."""
        where = "" if include_superseded else "WHERE s.new_id IS NULL"
        return self._read(f"{_SELECT} {where} ORDER BY c.seq")

    def search(self, query: str, k: int = 10,
               include_superseded: bool = False) -> list[ScoredClaim]:
        """The ``k`` best claims for ``query``, from the postings; see ``ClaimStore.search``."""
        check_k(k)
        with self._lock, snapshot(self._open_connection()) as cursor:
            ranked = impact_search(postings.SQLitePostings(cursor), query, k, include_superseded)
            if not ranked:
                return []
            rows: dict[int, _Row] = {row[0]: row[1:] for row in cursor.execute(
                f"SELECT c.seq, {_CLAIM_ROW} WHERE c.seq {IN_JSON_LIST}",
                (json_list(seq for _, seq in ranked),))}
        return [ScoredClaim(_to_claim(rows[seq]), score) for score, seq in ranked]


def open_claim_store(location: str, kind: str) -> SQLiteMemoryStore:
    """Open the claim store for the URI ``sqlite:<location>``, where location is a file path."""
    path = durable_store_path("sqlite", "grapharc-memory-sqlite", location, kind,
                              noun="file", example="memory.db")
    return SQLiteMemoryStore(path)
