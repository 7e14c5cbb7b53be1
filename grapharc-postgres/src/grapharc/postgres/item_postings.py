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
time together with their frequencies. A search is a few round trips, not one per step of the walk:
the groups come with the totals, and the source ``ReadsAhead``: one statement reads the first
items of several groups in the walk's order (or those of them holding another query term), each
with its frequencies and whether it is in scope, as many groups as a budget of postings allows
(32, doubling to 256), so a walk that stops early has read little it did not need; a group
too large for the budget is read as the walk asks, from its smaller side.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
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


_READ_AHEAD = (32, 64, 128, 256)
"""How many postings each read-ahead statement of one search may read, in turn (the last repeats):
few at first, since most walks stop within their first groups."""
_IN_GROUP = ("SELECT p.written FROM grapharc_store_postings AS p WHERE p.term = s.g_term "
             "AND p.frequency = s.g_frequency AND p.length = s.g_length ")
_FIRSTS = _IN_GROUP + "ORDER BY p.written LIMIT %s"
"""A group's first claims (the ``members`` the walk reads first), per read-ahead group ``s``."""
_HOLDERS = _IN_GROUP + ("AND EXISTS (SELECT 1 FROM grapharc_store_postings AS o "  # noqa: S608
                        "WHERE o.written = p.written AND o.term = ANY(%s) AND o.term <> s.g_term)")
"""A group's claims holding another query term (for ``members_holding``), per read-ahead group ``s``."""


@dataclass
class _ReadAhead:
    """What one kind of read-ahead found per group, and how many statements it took."""

    found: dict[tuple[str, Group], list[int]] = field(default_factory=dict)
    reads: int = 0

    def budget(self) -> int:
        """How many postings the next statement may read."""
        return _READ_AHEAD[min(self.reads, len(_READ_AHEAD) - 1)]


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
        self._totals: tuple[int, int] | None = None
        self._sizes: dict[tuple[str, Group], int] = {}
        self._steps: list[tuple[str, Group]] = []
        self._order: dict[tuple[str, Group], int] = {}
        self._first = 0
        self._terms: list[str] = []
        self._firsts = _ReadAhead()
        self._holders = _ReadAhead()

    def totals(self) -> tuple[int, int]:
        """Items indexed and the sum of their lengths (read with the groups when they were asked)."""
        if self._totals is None:
            row = self._conn.execute("SELECT items, length FROM grapharc_store_totals").fetchone()
            self._totals = (int(row["items"]), int(row["length"])) if row else (0, 0)
        return self._totals

    def groups(self, terms: Sequence[str]) -> list[dict[Group, int]]:
        """For each term, its groups and their sizes; the totals come in the same statement."""
        found: dict[str, dict[Group, int]] = {term: {} for term in terms}
        for row in self._conn.execute(
                "SELECT g.term, g.frequency, g.length, g.items, t.items AS total, t.length AS total_length "
                "FROM grapharc_store_groups AS g, grapharc_store_totals AS t WHERE g.term = ANY(%s)",
                (list(found),)):
            group = (float(row["frequency"]), int(row["length"]))
            found[row["term"]][group] = self._sizes[(row["term"], group)] = int(row["items"])
            self._totals = (int(row["total"]), int(row["total_length"]))
        return [found[term] for term in terms]

    def read_ahead(self, steps: Sequence[tuple[str, Group]], first: int) -> None:
        """Remember the walk's order of groups and its first read, to read groups in batches."""
        self._steps, self._first = list(steps), first
        self._order = {step: place for place, step in enumerate(self._steps)}
        self._terms = sorted({term for term, _ in self._steps})

    def members(self, term: str, group: Group, after: int, limit: int) -> list[int]:
        """Up to ``limit`` positions in the group above ``after``, ascending: a group's first read
        comes from a read-ahead batch, a later one from a statement of its own."""
        if after < 0 and limit == self._first and (term, group) in self._order:
            return self._ahead(self._firsts, (term, group), _FIRSTS, [self._first],
                               lambda step: min(self._sizes[step], self._first))
        return [row["written"] for row in self._conn.execute(
            "SELECT written FROM grapharc_store_postings WHERE term = %s AND frequency = %s AND length = %s "
            "AND written > %s ORDER BY written LIMIT %s", (term, *group, after, limit))]

    def _holders_ahead(self, step: tuple[str, Group], after: int, others: Sequence[str]) -> list[int] | None:
        """The group's positions above ``after`` holding any of ``others``, read ahead with those of
        the next groups (each holding any other query term); None for a group too large to read
        ahead, which the walk reads from its smaller side."""
        if step not in self._order or (step not in self._holders.found
                                       and self._sizes[step] > self._holders.budget()):
            return None
        holding = self._ahead(self._holders, step, _HOLDERS, [self._terms], self._sizes.__getitem__)
        return [position for position in holding if position > after
                and any(other in self._rows.get(position, {}) for other in others)]

    def members_holding(self, term: str, group: Group, after: int,
                        others: Sequence[str]) -> list[int]:
        """Positions in the group above ``after`` holding any of ``others``, read from the group
        (or ahead, with the next groups)."""
        ahead = self._holders_ahead((term, group), after, others)
        if ahead is not None:
            return ahead
        return [row["written"] for row in self._conn.execute(
            "SELECT p.written FROM grapharc_store_postings AS p WHERE p.term = %s AND p.frequency = %s "
            "AND p.length = %s AND p.written > %s AND EXISTS (SELECT 1 FROM grapharc_store_postings AS o "
            "WHERE o.written = p.written AND o.term = ANY(%s)) ORDER BY p.written",
            (term, *group, after, list(others)))]

    def members_among(self, term: str, group: Group, after: int,
                      others: Sequence[str]) -> list[int]:
        """The same positions, read from ``others``' postings (or ahead, with the next groups)."""
        ahead = self._holders_ahead((term, group), after, others)
        if ahead is not None:
            return ahead
        return [row["written"] for row in self._conn.execute(
            "SELECT DISTINCT o.written FROM grapharc_store_postings AS o WHERE o.term = ANY(%s) "
            "AND o.written > %s AND EXISTS (SELECT 1 FROM grapharc_store_postings AS p WHERE p.term = %s "
            "AND p.frequency = %s AND p.length = %s AND p.written = o.written) ORDER BY o.written",
            (list(others), after, term, *group))]

    def _ahead(self, cache: _ReadAhead, step: tuple[str, Group], lateral: str, parameters: list[Any],
               cost: Callable[[tuple[str, Group]], int]) -> list[int]:
        """The positions ``lateral`` finds in ``step``'s group, read with those of the next steps in
        one statement, each with its frequencies and scope: as many groups as the statement's
        budget of postings allows (``cost``: how many a group's read may take), ``step``'s at least."""
        if step not in cache.found:
            batch: list[tuple[str, Group]] = []
            spent, budget = 0, cache.budget()
            cache.reads += 1
            for later in self._steps[self._order[step]:]:
                if later in cache.found:
                    continue
                spent += cost(later)
                if batch and spent > budget:
                    break
                batch.append(later)
            for later in batch:
                cache.found[later] = []
            for row in self._conn.execute(
                    f"SELECT s.slot, p.written, i.frequencies, {self._scope} AS kept "  # noqa: S608
                    "FROM unnest(%s::text[], %s::float8[], %s::int[]) WITH ORDINALITY AS "
                    f"s(g_term, g_frequency, g_length, slot) CROSS JOIN LATERAL ({lateral}) AS p "
                    "LEFT JOIN grapharc_store_items AS i ON i.written = p.written ORDER BY s.slot, p.written",
                    [*self._parameters, [term for term, _ in batch], [group[0] for _, group in batch],
                     [group[1] for _, group in batch], *parameters]):
                cache.found[batch[row["slot"] - 1]].append(row["written"])
                self._remember(row)
        return cache.found[step]

    def _remember(self, row: dict[str, Any]) -> None:
        """Keep a read item's frequencies and whether it is in scope (an item gone is out of it)."""
        if row["frequencies"] is not None:
            self._rows[row["written"]] = row["frequencies"]
        self._kept[row["written"]] = bool(row["kept"])

    def _read(self, positions: Sequence[int]) -> None:
        """Read the frequencies of those of ``positions`` not read yet, and whether each is in scope,
        in one statement: the walk asks both of the same positions, one batch at a time."""
        unread = [position for position in positions if position not in self._rows]
        if unread:
            for row in self._conn.execute(
                    f"SELECT written, frequencies, {self._scope} AS kept "  # noqa: S608
                    "FROM grapharc_store_items WHERE written = ANY(%s)", [*self._parameters, unread]):
                self._remember(row)

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
