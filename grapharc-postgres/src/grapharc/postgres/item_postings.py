"""Impact-ordered postings of the long-term store's items in PostgreSQL, kept in step with every write.

As grapharc-memory-sqlite keeps them for its items: ``grapharc_store_postings`` is keyed by
(term, frequency, length, written), so each group of a term (every item in it gets the same BM25
contribution) is one range of the key, read oldest write first; ``grapharc_store_groups`` counts
each group's items and ``grapharc_store_totals`` the items and their summed length (an expired
item counts until it is swept or overwritten, as in every backend). A write removes the old
version's rows and adds the new one's in the item's own transaction, after locking the totals
row: every write takes that lock first, so writes to one database run one at a time and two of
them never lock group rows in opposite orders. ``grapharc.postgres.item_ranking`` searches them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
