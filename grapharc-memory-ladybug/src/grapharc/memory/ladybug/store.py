"""``LadybugMemoryStore``: claims as a property graph in LadybugDB, corrections as edges.

Each claim is a ``Claim`` node; a correction is a ``SUPERSEDED_BY`` edge from
the old claim to the new one, declared ``ONE_ONE`` so the engine itself
refuses a second correction of a claim, and ``history()`` is one Cypher path
query. A supersession is a single statement that creates the new node and its
edge together, so it commits whole or not at all.

Behaviour of LadybugDB (package ``ladybug``, 0.22.x) this module relies on,
as observed and pinned by the tests:

- Writers exclude each other by a file lock. While one process has the
  database open read-write, another read-write open fails with ``RuntimeError:
  IO exception: Could not set lock on file : PATH (Lock is held by PID N)``;
  this store, which always opens read-write, turns that into
  ``LadybugLockedError`` naming the holder. Sequential hand-off (close in one
  process, open in the next) works; concurrent multi-process writing does not.
  Use grapharc-memory-sqlite when several processes must write the same claims.
- A read-only open takes no lock: it succeeds while a writer holds the file
  and sees the database as it was when it opened, never the writer's later
  commits. (``real-ladybug`` 0.15 refused it.)
- The lock does not guard a process against itself: a second ``Database`` on
  the same path in the same process opens, and two writers would corrupt the
  file. This module therefore refuses a second open of a path within a process.
- Variable-length paths stop at 30 hops unless ``var_length_extend_max_depth``
  is raised, silently truncating a longer chain; this store raises it to
  ``MAX_CHAIN_LENGTH`` and its history query only matches a complete chain.
- ``TIMESTAMP`` drops a datetime's timezone without converting it, so
  observation times are written as naive UTC and read back as UTC.

LadybugDB's own full-text search is the ``fts`` extension, which is not in the
wheel: ``INSTALL fts`` downloads it from extension.ladybugdb.com, so it does not
work offline. ``search`` is answered instead from a ``TermIndex`` (the
in-process store's inverted index) built from the database when it is opened,
O(claims) once, and kept up to date by every write. That is sound because no
other process can write the database while this one holds it.
LadybugDB indexes only primary keys, so ``about`` is answered the same way:
claim ids per subject from a ``SubjectIndex`` built alongside, and the claims'
records from the ``TermIndex``, instead of a pass over every ``Claim`` node.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grapharc.memory.claims import (
    Claim,
    ClaimAlreadySupersededError,
    ClaimNotFoundError,
    ClaimStoreClosedError,
    ClaimStoreError,
    DuplicateClaimError,
    Provenance,
    ScoredClaim,
    check_new_batch,
    durable_store_path,
    first_current,
    require_claim,
)
from grapharc.memory.subject_index import SubjectIndex
from grapharc.memory.term_index import TermIndex

if TYPE_CHECKING:
    import ladybug

SCHEMA_COMPONENT = "claims"
SCHEMA_VERSION = 1
MAX_CHAIN_LENGTH = 100_000

_SCHEMA = (
    "CREATE NODE TABLE SchemaVersion (component STRING, version INT64, PRIMARY KEY (component))",
    "CREATE NODE TABLE Claim (id STRING, seq SERIAL, subject STRING, subject_key STRING, "
    "predicate STRING, object STRING, source STRING, observed_at TIMESTAMP, run_id STRING, "
    "PRIMARY KEY (id))",
    "CREATE REL TABLE SUPERSEDED_BY (FROM Claim TO Claim, ONE_ONE)",
)

_NEW_CLAIM = (
    "(n:Claim {id: $id, subject: $subject, subject_key: $subject_key, predicate: $predicate, "
    "object: $object, source: $source, observed_at: $observed_at, run_id: $run_id})"
)

_NEW_CLAIM_FROM_ROW = (
    "(n:Claim {id: r.id, subject: r.subject, subject_key: r.subject_key, predicate: r.predicate, "
    "object: r.object, source: r.source, observed_at: r.observed_at, run_id: r.run_id})"
)

_WITH_SUCCESSOR = "OPTIONAL MATCH (c)-[:SUPERSEDED_BY]->(s:Claim)"

_HISTORY = """
MATCH (member:Claim {id: $id})
MATCH (root:Claim)-[:SUPERSEDED_BY*0..]->(member)
WHERE NOT EXISTS { MATCH (:Claim)-[:SUPERSEDED_BY]->(root) }
MATCH chain = (root)-[:SUPERSEDED_BY*0..]->(head:Claim)
WHERE NOT EXISTS { MATCH (head)-[:SUPERSEDED_BY]->(:Claim) }
RETURN nodes(chain)
"""

_LOCK_HOLDER = re.compile(r"Lock is held by PID (\d+)")

_OPEN_PATHS: set[Path] = set()
_OPEN_PATHS_LOCK = threading.Lock()


class LadybugLockedError(ClaimStoreError):
    """The LadybugDB database is already open elsewhere, and LadybugDB allows one writer."""


def _locked_error(path: Path, message: str) -> LadybugLockedError:
    """Explain LadybugDB's lock failure, naming the holding process when it says which."""
    holder = _LOCK_HOLDER.search(message)
    who = f"process {holder.group(1)}" if holder else "another process"
    return LadybugLockedError(
        f"LadybugDB database {str(path)!r} is locked by {who}; "
        "LadybugDB lets one process at a time open it for writing",
        hint=f"close it in {who} first, or use grapharc-memory-sqlite "
        "for claims written by concurrent processes",
    )


_FIELDS = ("id", "subject", "predicate", "object", "source", "observed_at", "run_id")
_RETURN_CLAIMS = f"RETURN {', '.join(f'c.{field}' for field in _FIELDS)}, s.id ORDER BY c.seq"
"""Columns, not the node: LadybugDB returns a node as a dict of every property and its internal
ids, which took 2.1-2.7 s of 100k claims' 5 s reopen where the columns take 0.8-1.1 s."""


def _to_claim(row: Sequence[Any]) -> Claim:
    """A claim from its ``_FIELDS`` values and its successor's id."""
    claim_id, subject, predicate, obj, source, observed_at, run_id, superseded_by = row
    provenance = Provenance(source=source, observed_at=observed_at.replace(tzinfo=UTC), run_id=run_id)
    return Claim(id=claim_id, subject=subject, predicate=predicate, object=obj,
                 provenance=provenance, superseded_by=superseded_by)


def _parameters(claim: Claim) -> dict[str, Any]:
    observed_at: datetime = claim.provenance.observed_at
    return {
        "id": claim.id,
        "subject": claim.subject,
        "subject_key": claim.subject_key,
        "predicate": claim.predicate,
        "object": claim.object,
        "source": claim.provenance.source,
        "observed_at": observed_at.astimezone(UTC).replace(tzinfo=None),
        "run_id": claim.provenance.run_id,
    }


class LadybugMemoryStore:
    """A durable ``ClaimStore`` on an embedded LadybugDB graph; one process at a time."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._key = self.path.resolve()
        self._lock = threading.Lock()
        self._database: ladybug.Database | None = None
        self._connection: ladybug.Connection | None = None
        self._registered = False
        self._index = TermIndex()
        self._subjects = SubjectIndex()
        with _OPEN_PATHS_LOCK:
            if self._key in _OPEN_PATHS:
                raise LadybugLockedError(
                    f"LadybugDB database {str(self.path)!r} is already open in this process",
                    hint="share the open LadybugMemoryStore, or close it before opening again",
                )
            _OPEN_PATHS.add(self._key)
            self._registered = True
        try:
            self._open()
            self._remember(self.all(include_superseded=True))
        except BaseException:
            self.close()
            raise

    def _open(self) -> None:
        """Open the database (translating its lock error) and create or check the schema."""
        import ladybug

        try:
            self._database = ladybug.Database(self.path)
            self._connection = ladybug.Connection(self._database)
        except RuntimeError as error:
            if "Could not set lock" in str(error):
                raise _locked_error(self.path, str(error)) from error
            raise ClaimStoreError(
                f"cannot open LadybugDB claim store {str(self.path)!r}: {error}",
                hint="give the path of a LadybugDB database file (created if missing) "
                "in an existing, writable directory",
            ) from error
        self._query(f"CALL var_length_extend_max_depth={MAX_CHAIN_LENGTH}")
        tables = {row[0] for row in self._query("CALL show_tables() RETURN name")}
        if "SchemaVersion" not in tables:
            self._query("BEGIN TRANSACTION")
            for statement in _SCHEMA:
                self._query(statement)
            self._query(
                "CREATE (:SchemaVersion {component: $component, version: $version})",
                {"component": SCHEMA_COMPONENT, "version": SCHEMA_VERSION},
            )
            self._query("COMMIT")
            return
        found = self._query(
            "MATCH (v:SchemaVersion {component: $component}) RETURN v.version",
            {"component": SCHEMA_COMPONENT},
        )
        version = found[0][0] if found else None
        if version != SCHEMA_VERSION:
            raise ClaimStoreError(
                f"LadybugDB claim store {str(self.path)!r} has claims schema version "
                f"{version}, but this grapharc-memory-ladybug reads version {SCHEMA_VERSION}",
                hint="open it with the GraphARC version that wrote it",
            )

    def _query(self, cypher: str, parameters: dict[str, Any] | None = None) -> list[Any]:
        """Run one Cypher statement and return its rows."""
        result = self._open_connection().execute(cypher, parameters or {})
        assert not isinstance(result, list), "one statement yields one result"  # noqa: S101 -- narrows the type: one statement gives one result
        return result.get_all()

    def _claims(self, match: str, parameters: dict[str, Any] | None = None) -> list[Claim]:
        """Return the claims ``c`` that ``match`` binds, in insertion order."""
        with self._lock:
            rows = self._query(f"{match} {_RETURN_CLAIMS}", parameters)
        return [_to_claim(row) for row in rows]

    def _remember(self, claims: Sequence[Claim]) -> None:
        """Add stored claims to the in-memory term and subject indexes."""
        self._index.add_many(claims)
        for claim in claims:
            self._subjects.add(claim)

    def _check_insertable(self, claim: Claim) -> None:
        require_claim(claim)
        if claim.superseded_by is not None:
            raise ClaimAlreadySupersededError(claim.id, claim.superseded_by)
        if self._query("MATCH (c:Claim {id: $id}) RETURN c.id", {"id": claim.id}):
            raise DuplicateClaimError(claim.id)

    def add(self, claim: Claim) -> Claim:
        """Store a new claim as a node; see ``ClaimStore.add``."""
        with self._lock:
            self._check_insertable(claim)
            self._query(f"CREATE {_NEW_CLAIM}", _parameters(claim))
            self._remember([claim])
        return claim

    def add_many(self, claims: Sequence[Claim]) -> list[Claim]:
        """Store several new claims with one ``UNWIND ... CREATE`` statement, all or none."""
        with self._lock:
            check_new_batch(claims)
            if not claims:
                return []
            taken = {row[0] for row in self._query(
                "UNWIND $ids AS i MATCH (c:Claim {id: i}) RETURN c.id",
                {"ids": [claim.id for claim in claims]})}
            if taken:
                raise DuplicateClaimError(next(c.id for c in claims if c.id in taken))
            self._query(f"UNWIND $rows AS r CREATE {_NEW_CLAIM_FROM_ROW}",
                        {"rows": [_parameters(claim) for claim in claims]})
            self._remember(claims)
        return list(claims)

    def get(self, claim_id: str) -> Claim:
        """Return the claim with this id; see ``ClaimStore.get``."""
        found = self._claims(f"MATCH (c:Claim {{id: $id}}) {_WITH_SUCCESSOR}", {"id": claim_id})
        if not found:
            raise ClaimNotFoundError(claim_id)
        return found[0]

    def supersede(self, old_id: str, new_claim: Claim) -> Claim:
        """Create ``new_claim`` and its ``SUPERSEDED_BY`` edge from ``old_id`` in one statement."""
        with self._lock:
            found = self._query(
                "MATCH (c:Claim {id: $id}) OPTIONAL MATCH (c)-[:SUPERSEDED_BY]->(s:Claim) "
                "RETURN s.id",
                {"id": old_id},
            )
            if not found:
                raise ClaimNotFoundError(old_id)
            if found[0][0] is not None:
                raise ClaimAlreadySupersededError(old_id, found[0][0])
            self._check_insertable(new_claim)
            self._query(
                f"MATCH (o:Claim {{id: $old_id}}) CREATE (o)-[:SUPERSEDED_BY]->{_NEW_CLAIM}",
                {"old_id": old_id, **_parameters(new_claim)},
            )
            self._remember([new_claim])
            self._index.mark_superseded(old_id, new_claim.id)
        return new_claim

    def about(self, subject: str, limit: int | None = None) -> list[Claim]:
        """Return current claims about ``subject`` from the indexes; see ``ClaimStore.about``."""
        with self._lock:
            self._open_connection()
            found = (self._index.get(claim_id) for claim_id in self._subjects.ids_about(subject))
            return first_current(found, limit)

    def history(self, claim_id: str) -> list[Claim]:
        """Return the correction chain ``claim_id`` is in, oldest first, as one path query."""
        with self._lock:
            rows = self._query(_HISTORY, {"id": claim_id})
        if not rows:
            self.get(claim_id)
            raise ClaimStoreError(
                f"the correction chain of claim {claim_id!r} is longer than "
                f"{MAX_CHAIN_LENGTH} claims, the most this store walks",
            )
        nodes: list[dict[str, Any]] = rows[0][0]
        successors = [node["id"] for node in nodes[1:]] + [None]
        pairs = zip(nodes, successors, strict=True)
        return [_to_claim([*(node[field] for field in _FIELDS), successor])
                for node, successor in pairs]

    def all(self, include_superseded: bool = False) -> list[Claim]:
        """Return current claims, or every claim if ``include_superseded``."""
        current_only = "" if include_superseded else "WITH c, s WHERE s IS NULL"
        return self._claims(f"MATCH (c:Claim) {_WITH_SUCCESSOR} {current_only}")

    def search(self, query: str, k: int = 10,
               include_superseded: bool = False) -> list[ScoredClaim]:
        """The ``k`` best claims for ``query`` from the maintained index; see the module docstring."""
        with self._lock:
            self._open_connection()
            return self._index.search(query, k, include_superseded)

    def _open_connection(self) -> ladybug.Connection:
        if self._connection is None:
            raise ClaimStoreClosedError(f"LadybugDB claim store {str(self.path)!r}")
        return self._connection

    def close(self) -> None:
        """Close the connection and database, releasing the file lock; idempotent."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
            if self._database is not None:
                self._database.close()
            self._connection = None
            self._database = None
            self._index = TermIndex()
            self._subjects = SubjectIndex()
            if self._registered:
                with _OPEN_PATHS_LOCK:
                    _OPEN_PATHS.discard(self._key)
                self._registered = False


def open_claim_store(location: str, kind: str) -> LadybugMemoryStore:
    """Open the claim store for the URI ``ladybug:<location>``, where location is a path."""
    path = durable_store_path("ladybug", "grapharc-memory-ladybug", location, kind,
                              noun="database", example="memory.lbug")
    return LadybugMemoryStore(path)
