"""Impact-ordered postings in the claims file: written with the claims, walked by ``search``.

``postings`` holds one row per (term, claim), keyed by (term, weighted
frequency, claim length, seq), so one group of a term (every claim in it gets
the same BM25F contribution) is one range of the key, read oldest first, and
``postings_by_claim`` finds a claim's frequencies of other query terms.
``term_groups`` counts each group's claims and ``claim_totals`` the claims and
their summed length, so a query reads collection statistics instead of
counting rows. They are written in the claims' own transaction;
``SQLitePostings`` is ``impact_walk``'s ``PostingsSource`` over one cursor,
used inside a read transaction so every statement sees one snapshot.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence

from grapharc.memory.bm25f import weighted_frequencies
from grapharc.memory.claims import Claim
from grapharc.memory.impact_walk import Group

SCHEMA = (
    """CREATE TABLE postings (
        term TEXT NOT NULL,
        frequency REAL NOT NULL,
        length INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (term, frequency, length, seq)
    ) WITHOUT ROWID""",
    "CREATE INDEX postings_by_claim ON postings (seq, term)",
    """CREATE TABLE term_groups (
        term TEXT NOT NULL,
        frequency REAL NOT NULL,
        length INTEGER NOT NULL,
        claims INTEGER NOT NULL,
        PRIMARY KEY (term, frequency, length)
    ) WITHOUT ROWID""",
    "CREATE TABLE claim_totals (claims INTEGER NOT NULL, length INTEGER NOT NULL)",
    "INSERT INTO claim_totals (claims, length) VALUES (0, 0)",
)

_ADD_TO_GROUP = (
    "INSERT INTO term_groups (term, frequency, length, claims) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (term, frequency, length) DO UPDATE SET claims = claims + excluded.claims"
)


def index_claims(cursor: sqlite3.Cursor, numbered: Sequence[tuple[int, Claim]]) -> None:
    """Add the postings and statistics of new claims, each under its ``seq``; the caller
    holds the write transaction that stores the claims."""
    rows: list[tuple[str, float, int, int]] = []
    total_length = 0
    for seq, claim in numbered:
        frequencies, length = weighted_frequencies(claim)
        total_length += length
        rows.extend((term, frequency, length, seq) for term, frequency in frequencies.items())
    rows.sort()
    cursor.executemany("INSERT INTO postings (term, frequency, length, seq) VALUES (?, ?, ?, ?)",
                       rows)
    sizes = Counter((term, frequency, length) for term, frequency, length, _ in rows)
    cursor.executemany(_ADD_TO_GROUP, [(*group, size) for group, size in sizes.items()])
    cursor.execute("UPDATE claim_totals SET claims = claims + ?, length = length + ?",
                   (len(numbered), total_length))


_TERMS_AT_ONCE = 400  # with a walk's 500 positions, under SQLite's old 999-parameter limit


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))


def _batches(terms: Sequence[str]) -> list[Sequence[str]]:
    """``terms`` in slices short enough for one statement's parameters."""
    return [terms[start:start + _TERMS_AT_ONCE] for start in range(0, len(terms), _TERMS_AT_ONCE)]


class SQLitePostings:
    """``impact_walk``'s ``PostingsSource`` over the postings tables; positions are ``seq``."""

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor

    def totals(self) -> tuple[int, int]:
        """Claims stored and the sum of their lengths."""
        claims, length = self._cursor.execute(
            "SELECT claims, length FROM claim_totals").fetchone()
        return int(claims), int(length)

    def groups(self, terms: Sequence[str]) -> list[dict[Group, int]]:
        """For each term, its groups and their sizes."""
        found: dict[str, dict[Group, int]] = {term: {} for term in terms}
        for batch in _batches(terms):
            for term, frequency, length, claims in self._cursor.execute(
                    f"SELECT term, frequency, length, claims FROM term_groups "
                    f"WHERE term IN ({_marks(batch)})", batch):
                found[term][(float(frequency), int(length))] = int(claims)
        return [found[term] for term in terms]

    def members(self, term: str, group: Group, after: int, limit: int) -> list[int]:
        """Up to ``limit`` positions in the group above ``after``, ascending."""
        return [row[0] for row in self._cursor.execute(
            "SELECT seq FROM postings WHERE term = ? AND frequency = ? AND length = ? "
            "AND seq > ? ORDER BY seq LIMIT ?", (term, *group, after, limit))]

    def members_holding(self, term: str, group: Group, after: int,
                        others: Sequence[str]) -> list[int]:
        """Positions in the group above ``after`` holding any of ``others``, read from the group."""
        return self._union(others, lambda batch: (
            f"SELECT p.seq FROM postings AS p WHERE p.term = ? AND p.frequency = ? "
            f"AND p.length = ? AND p.seq > ? AND EXISTS (SELECT 1 FROM postings AS o "
            f"WHERE o.seq = p.seq AND o.term IN ({_marks(batch)}))", (term, *group, after, *batch)))

    def members_among(self, term: str, group: Group, after: int,
                      others: Sequence[str]) -> list[int]:
        """The same positions, read from ``others``' postings (CROSS JOIN keeps that order)."""
        return self._union(others, lambda batch: (
            f"SELECT o.seq FROM postings AS o CROSS JOIN postings AS p "
            f"ON p.term = ? AND p.frequency = ? AND p.length = ? AND p.seq = o.seq "
            f"WHERE o.term IN ({_marks(batch)}) AND o.seq > ?", (term, *group, *batch, after)))

    def _union(self, terms: Sequence[str],
               statement: Callable[[Sequence[str]], tuple[str, tuple[object, ...]]]) -> list[int]:
        """The seqs ``statement`` selects for each slice of ``terms``, together, ascending."""
        found: set[int] = set()
        for batch in _batches(terms):
            found.update(row[0] for row in self._cursor.execute(*statement(batch)))
        return sorted(found)

    def frequencies(self, positions: Sequence[int],
                    terms: Sequence[str]) -> dict[int, dict[str, float]]:
        """Each position's weighted frequency of those of ``terms`` it holds, in one lookup per
        slice of terms."""
        held: dict[int, dict[str, float]] = {}
        for batch in _batches(terms):
            for seq, term, frequency in self._cursor.execute(
                    f"SELECT seq, term, frequency FROM postings INDEXED BY postings_by_claim "
                    f"WHERE seq IN ({_marks(positions)}) AND term IN ({_marks(batch)})",
                    (*positions, *batch)):
                held.setdefault(seq, {})[term] = float(frequency)
        return held

    def superseded(self, positions: Sequence[int]) -> set[int]:
        """Those of ``positions`` whose claims have been corrected."""
        return {row[0] for row in self._cursor.execute(
            f"SELECT c.seq FROM claims AS c JOIN supersessions AS s ON s.old_id = c.id "
            f"WHERE c.seq IN ({_marks(positions)})", positions)}
