"""Impact-ordered postings of the long-term store's items in PostgreSQL, kept in step with every write.

As grapharc-memory-sqlite keeps them for its items: ``grapharc_store_postings`` is keyed by
(term, frequency, length, written), so each group of a term (every item in it gets the same BM25
contribution) is one range of the key, read oldest write first; ``grapharc_store_groups`` counts
each group's items and ``grapharc_store_totals`` the items and their summed length (an expired
item counts until it is swept or overwritten, as in every backend). A write removes the old
version's rows and adds the new one's in the item's own transaction, after locking the totals
row: every write takes that lock first, so writes to one database run one at a time and two of
them never lock group rows in opposite orders. ``PostgresItemPostings`` is ``impact_walk``'s
``PostingsSource`` over one connection inside the search's transaction; its ``superseded`` drops
the positions outside the search's scope (namespace, expiry, filter), asked of SQL a batch at a
time together with their frequencies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from grapharc.memory.impact_walk import Group
from grapharc.postgres.database import Conn

_TERMS = "FROM unnest(%(terms)s::text[], %(frequencies)s::float8[]) AS given(term, frequency)"


def lock_totals(conn: Conn) -> None:
    """Take the write lock (the totals row) for the rest of the transaction."""
    conn.execute("SELECT items FROM grapharc_store_totals FOR UPDATE")


def _given(written: int, frequencies: Mapping[str, float], length: int) -> dict[str, Any]:
    ordered = sorted(frequencies.items())
    return {"written": written, "length": length, "terms": [term for term, _ in ordered],
            "frequencies": [frequency for _, frequency in ordered]}


def index_item(conn: Conn, written: int, frequencies: Mapping[str, float], length: int) -> None:
    """Add the postings, groups and totals of the item written at ``written``."""
    given = _given(written, frequencies, length)
    if frequencies:
        conn.execute("INSERT INTO grapharc_store_postings (term, frequency, length, written) "
                     f"SELECT term, frequency, %(length)s, %(written)s {_TERMS}", given)
        conn.execute("INSERT INTO grapharc_store_groups (term, frequency, length, items) "
                     f"SELECT term, frequency, %(length)s, 1 {_TERMS} ORDER BY term, frequency "
                     "ON CONFLICT (term, frequency, length) DO UPDATE "
                     "SET items = grapharc_store_groups.items + 1", given)
    conn.execute("UPDATE grapharc_store_totals SET items = items + 1, length = length + %(length)s", given)


def unindex_item(conn: Conn, written: int, frequencies: Mapping[str, float], length: int) -> None:
    """Remove what ``index_item`` added for the item at ``written``."""
    given = _given(written, frequencies, length)
    if frequencies:
        conn.execute("DELETE FROM grapharc_store_postings WHERE (term, frequency, length, written) IN "  # noqa: S608
                     f"(SELECT term, frequency, %(length)s, %(written)s {_TERMS})", given)
        conn.execute("UPDATE grapharc_store_groups SET items = items - 1 WHERE (term, frequency, length) IN "  # noqa: S608
                     f"(SELECT term, frequency, %(length)s {_TERMS})", given)
        conn.execute("DELETE FROM grapharc_store_groups WHERE items = 0 AND term = ANY(%(terms)s)", given)
    conn.execute("UPDATE grapharc_store_totals SET items = items - 1, length = length - %(length)s", given)


class PostgresItemPostings:
    """``impact_walk``'s ``PostingsSource`` over the item postings; positions are ``written``.
    Positions outside ``scope`` (a ``WHERE`` expression over ``grapharc_store_items`` and its
    parameters) count as superseded."""

    def __init__(self, conn: Conn, scope: str, parameters: Sequence[Any]) -> None:
        self._conn = conn
        self._scope = scope
        self._parameters = list(parameters)
        self._rows: dict[int, dict[str, float]] = {}
        self._kept: dict[int, bool] = {}

    def totals(self) -> tuple[int, int]:
        """Items indexed and the sum of their lengths."""
        row = self._conn.execute("SELECT items, length FROM grapharc_store_totals").fetchone()
        return (int(row["items"]), int(row["length"])) if row else (0, 0)

    def groups(self, terms: Sequence[str]) -> list[dict[Group, int]]:
        """For each term, its groups and their sizes."""
        found: dict[str, dict[Group, int]] = {term: {} for term in terms}
        for row in self._conn.execute("SELECT term, frequency, length, items FROM grapharc_store_groups "
                                      "WHERE term = ANY(%s)", (list(found),)):
            found[row["term"]][(float(row["frequency"]), int(row["length"]))] = int(row["items"])
        return [found[term] for term in terms]

    def members(self, term: str, group: Group, after: int, limit: int) -> list[int]:
        """Up to ``limit`` positions in the group above ``after``, ascending."""
        return [row["written"] for row in self._conn.execute(
            "SELECT written FROM grapharc_store_postings WHERE term = %s AND frequency = %s AND length = %s "
            "AND written > %s ORDER BY written LIMIT %s", (term, *group, after, limit))]

    def members_holding(self, term: str, group: Group, after: int,
                        others: Sequence[str]) -> list[int]:
        """Positions in the group above ``after`` holding any of ``others``, read from the group."""
        return [row["written"] for row in self._conn.execute(
            "SELECT p.written FROM grapharc_store_postings AS p WHERE p.term = %s AND p.frequency = %s "
            "AND p.length = %s AND p.written > %s AND EXISTS (SELECT 1 FROM grapharc_store_postings AS o "
            "WHERE o.written = p.written AND o.term = ANY(%s)) ORDER BY p.written",
            (term, *group, after, list(others)))]

    def members_among(self, term: str, group: Group, after: int,
                      others: Sequence[str]) -> list[int]:
        """The same positions, read from ``others``' postings."""
        return [row["written"] for row in self._conn.execute(
            "SELECT DISTINCT o.written FROM grapharc_store_postings AS o WHERE o.term = ANY(%s) "
            "AND o.written > %s AND EXISTS (SELECT 1 FROM grapharc_store_postings AS p WHERE p.term = %s "
            "AND p.frequency = %s AND p.length = %s AND p.written = o.written) ORDER BY o.written",
            (list(others), after, term, *group))]

    def _read(self, positions: Sequence[int]) -> None:
        """Read the frequencies of those of ``positions`` not read yet, and whether each is in scope,
        in one statement: the walk asks both of the same positions, one batch at a time."""
        unread = [position for position in positions if position not in self._rows]
        if unread:
            for row in self._conn.execute(
                    f"SELECT written, frequencies, {self._scope} AS kept "  # noqa: S608
                    "FROM grapharc_store_items WHERE written = ANY(%s)", [*self._parameters, unread]):
                self._rows[row["written"]] = row["frequencies"]
                self._kept[row["written"]] = bool(row["kept"])

    def frequencies(self, positions: Sequence[int],
                    terms: Sequence[str]) -> dict[int, dict[str, float]]:
        """Each position's frequency of those of ``terms`` it holds, from its item's ``frequencies``."""
        self._read(positions)
        held: dict[int, dict[str, float]] = {}
        for position in positions:
            counts = self._rows.get(position, {})
            found = {term: float(counts[term]) for term in terms if term in counts}
            if found:
                held[position] = found
        return held

    def superseded(self, positions: Sequence[int]) -> set[int]:
        """Those of ``positions`` outside the search's scope."""
        self._read(positions)
        return {position for position in positions if not self._kept.get(position, False)}
