"""Impact-ordered postings in the claims file, written as append-only runs and walked by ``search``.

Each claim's weighted term frequencies are one JSON row of ``claim_terms``
(keyed by seq, so a batch appends), from which ``search`` reads a claim's
frequencies of the other query terms. The postings are built from those rows
in SQL (``json_each``), one statement per batch: rows of ``postings`` keyed by
(run, term, weighted frequency, claim length, seq), where a run is a
contiguous range of seqs, so one group of a term in a run (every claim in it
gets the same BM25F contribution) is one range of the key, read oldest first;
``term_groups`` counts each group's claims per run, and ``claim_totals`` the
claims and their summed length. A batch becomes a new run numbered above every
other, so its rows are appended at the end of the B-trees instead of landing
on pages all over them (version 3 keyed postings by term first, so a batch of
1,000 claims wrote pages across the whole table and its cost grew with the
file). The newest runs are merged LSM-style (``merge_start``), again numbered
highest, so run ids ascend with seqs and a file holds fewer than
``MERGE_FANOUT`` runs per size level; a query reads each of its terms in each
run. A run also holds its claims' subject keys (``subject_keys``, keyed by
run, subject key, seq), which ``about`` reads instead of an index on
``claims``: that index took each batch's subjects wherever they sorted, and
at 97k zipf claims was 410 of the 566 pages a batch of 1,000 wrote (172 with
the keys in the runs). Everything is written in the claims' own transaction
(the claims' rows first: the subject keys are copied from them);
``SQLitePostings`` is ``impact_walk``'s ``PostingsSource`` over one cursor,
used inside a read transaction so every statement sees one snapshot.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from grapharc.memory.bm25f import weighted_frequencies_of
from grapharc.memory.claims import Claim
from grapharc.memory.impact_walk import Group
from grapharc.memory.sqlite.database import IN_JSON_LIST, insert_rows, json_list

SCHEMA = (
    """CREATE TABLE claim_terms (
        seq INTEGER PRIMARY KEY,
        length INTEGER NOT NULL,
        terms TEXT NOT NULL
    )""",
    "CREATE TABLE runs (run INTEGER PRIMARY KEY, first_seq INTEGER NOT NULL, "
    "last_seq INTEGER NOT NULL)",
    """CREATE TABLE postings (
        run INTEGER NOT NULL,
        term TEXT NOT NULL,
        frequency REAL NOT NULL,
        length INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (run, term, frequency, length, seq)
    ) WITHOUT ROWID""",
    """CREATE TABLE term_groups (
        run INTEGER NOT NULL,
        term TEXT NOT NULL,
        frequency REAL NOT NULL,
        length INTEGER NOT NULL,
        claims INTEGER NOT NULL,
        PRIMARY KEY (run, term, frequency, length)
    ) WITHOUT ROWID""",
    """CREATE TABLE subject_keys (
        run INTEGER NOT NULL,
        subject_key TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (run, subject_key, seq)
    ) WITHOUT ROWID""",
    "CREATE TABLE claim_totals (claims INTEGER NOT NULL, length INTEGER NOT NULL)",
    "INSERT INTO claim_totals (claims, length) VALUES (0, 0)",
)

MERGE_FANOUT = 16  # runs of one size level merged into one; a level spans 16x in claims

_WRITE_POSTINGS = (
    "INSERT INTO postings (run, term, frequency, length, seq) "
    "SELECT ?, t.key, t.value, c.length, c.seq FROM claim_terms AS c, json_each(c.terms) AS t "
    "WHERE c.seq BETWEEN ? AND ? ORDER BY t.key, t.value, c.length, c.seq"
)
_WRITE_SUBJECT_KEYS = (
    "INSERT INTO subject_keys (run, subject_key, seq) SELECT ?, subject_key, seq FROM claims "
    "WHERE seq BETWEEN ? AND ? ORDER BY subject_key, seq"
)
_COUNT_GROUPS = (
    "INSERT INTO term_groups (run, term, frequency, length, claims) "
    "SELECT run, term, frequency, length, count(*) FROM postings WHERE run = ? "
    "GROUP BY term, frequency, length"
)


def index_claims(cursor: sqlite3.Cursor, numbered: Sequence[tuple[int, Claim]]) -> None:
    """Add the terms, postings, subject keys and statistics of new claims, numbered by
    consecutive ``seq`` as one run, and merge runs as ``merge_start`` says; the caller holds
    the write transaction that has stored the claims' rows."""
    if not numbered:
        return
    forward = []
    total_length = 0
    documents = weighted_frequencies_of(claim for _, claim in numbered)
    numbers: dict[float, str] = {}
    for (seq, _), (frequencies, length) in zip(numbered, documents, strict=True):
        total_length += length
        forward.append((seq, length, terms_json(frequencies, numbers)))
    insert_rows(cursor, "claim_terms", ("seq", "length", "terms"), forward)
    cursor.execute("UPDATE claim_totals SET claims = claims + ?, length = length + ?",
                   (len(numbered), total_length))
    run = _new_run(cursor, numbered[0][0], numbered[-1][0])
    cursor.execute(_WRITE_POSTINGS, (run, numbered[0][0], numbered[-1][0]))
    cursor.execute(_COUNT_GROUPS, (run,))
    cursor.execute(_WRITE_SUBJECT_KEYS, (run, numbered[0][0], numbered[-1][0]))
    runs = cursor.execute("SELECT run, first_seq, last_seq FROM runs ORDER BY run").fetchall()
    while (start := merge_start([last - first + 1 for _, first, last in runs])) is not None:
        first, last = runs[start][1], runs[-1][2]
        runs[start:] = [(_merge(cursor, [run for run, _, _ in runs[start:]], first, last),
                         first, last)]


def terms_json(frequencies: dict[str, float], numbers: dict[float, str]) -> str:
    """A claim's weighted frequencies as the JSON object ``claim_terms`` holds, written
    directly (a third of ``json.dumps``' cost): a term is letters, marks, digits and
    private-use characters only (``grapharc.memory.terms``), never a quote, backslash or
    control character, so it needs no escaping; ``numbers`` caches each frequency's text,
    since a batch's frequencies take few distinct values."""
    fields = []
    for term, frequency in frequencies.items():
        number = numbers.get(frequency)
        if number is None:
            number = numbers[frequency] = repr(frequency)
        fields.append(f'"{term}":{number}')
    return "{" + ",".join(fields) + "}"


def _new_run(cursor: sqlite3.Cursor, first: int, last: int) -> int:
    """Record a run of the claims ``first``..``last``, numbered above every other (so its
    rows append to the tables' B-trees), and return its id."""
    run = cursor.execute("INSERT INTO runs (run, first_seq, last_seq) VALUES "
                         "((SELECT coalesce(max(run), 0) + 1 FROM runs), ?, ?)",
                         (first, last)).lastrowid
    assert run is not None  # noqa: S101 -- narrows the type: an INSERT always has a rowid
    return run


def _merge(cursor: sqlite3.Cursor, merged: Sequence[int], first: int, last: int) -> int:
    """Copy the runs ``merged`` (the claims ``first``..``last``) into one new run, delete
    them, and return the new run's id. The new run's groups are counted from its postings,
    already in group order (summing the old runs' groups took a sort as well: about 1 us more
    per claim merged)."""
    run = _new_run(cursor, first, last)
    cursor.execute(f"INSERT INTO postings (run, term, frequency, length, seq) "  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                   f"SELECT ?, term, frequency, length, seq FROM postings "
                   f"WHERE run IN ({_marks(merged)}) ORDER BY term, frequency, length, seq",
                   (run, *merged))
    cursor.execute(_COUNT_GROUPS, (run,))
    cursor.execute(f"INSERT INTO subject_keys (run, subject_key, seq) "  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                   f"SELECT ?, subject_key, seq FROM subject_keys "
                   f"WHERE run IN ({_marks(merged)}) ORDER BY subject_key, seq", (run, *merged))
    for table in ("runs", "postings", "term_groups", "subject_keys"):
        cursor.execute(f"DELETE FROM {table} WHERE run IN ({_marks(merged)})", merged)  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
    return run


def merge_start(sizes: Sequence[int]) -> int | None:
    """Where the runs to merge into one begin, given each run's claims oldest first, or None.

    A run's level is how many times ``MERGE_FANOUT`` divides into its size. The
    newest run absorbs the runs just before it on a lower level, so levels never
    rise towards the newest; ``MERGE_FANOUT`` newest runs on one level merge.
    So a file keeps fewer than ``MERGE_FANOUT`` runs per level, and a claim's
    postings are rewritten about once per level.
    """
    levels = [_level(size) for size in sizes]
    start = len(levels) - 1
    while start > 0 and levels[start - 1] < levels[-1]:
        start -= 1
    if start < len(levels) - 1:
        return start
    if len(levels) >= MERGE_FANOUT and len(set(levels[-MERGE_FANOUT:])) == 1:
        return len(levels) - MERGE_FANOUT
    return None


def _level(size: int) -> int:
    level = 0
    while size >= MERGE_FANOUT:
        size //= MERGE_FANOUT
        level += 1
    return level


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))


_KEYS_AT_ONCE = 8  # terms looked for in one statement: a query's few, or a long one's slices


def _number_at(row: str, start: int) -> float:
    """The JSON number of a ``claim_terms`` row that begins at ``start`` (it ends at the comma
    before the next key, or at the closing brace)."""
    end = row.find(",", start)
    return float(row[start:end if end >= 0 else row.index("}", start)])


def _key_forms(term: str) -> tuple[str, str | None]:
    """How ``term`` is keyed in a ``claim_terms`` row, the frequency following: ``"term":`` as
    ``terms_json`` writes it (a term never needs escaping, and no other key or number can hold
    that text), and, if different, as ``json.dumps`` wrote it in files of this version from
    before, with non-ASCII characters escaped."""
    written = f'"{term}":'
    dumped = f"{json.dumps(term)}:"
    return written, None if dumped == written else dumped


class SQLitePostings:
    """``impact_walk``'s ``PostingsSource`` over the postings tables; positions are ``seq``.
    Every list (runs, seqs, terms) is one JSON parameter, so each statement has one text."""

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor
        self._last_seqs = dict(cursor.execute(
            "SELECT run, last_seq FROM runs ORDER BY run").fetchall())
        self._holders: dict[tuple[str, Group], str] = {}
        self._rows: dict[int, str] = {}  # claim_terms rows read by this search, by seq
        self._corrections: bool | None = None

    def totals(self) -> tuple[int, int]:
        """Claims stored and the sum of their lengths."""
        claims, length = self._cursor.execute(
            "SELECT claims, length FROM claim_totals").fetchone()
        return int(claims), int(length)

    def groups(self, terms: Sequence[str]) -> list[dict[Group, int]]:
        """For each term, its groups and their sizes, summed over runs in SQL (which runs hold
        a group is kept as SQLite lists them, and read only for the groups walked)."""
        found: dict[str, dict[Group, int]] = {term: {} for term in terms}
        for term, frequency, length, claims, holders in self._cursor.execute(
                f"SELECT term, frequency, length, sum(claims), group_concat(run) "  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                f"FROM term_groups WHERE run {IN_JSON_LIST} AND term {IN_JSON_LIST} "
                f"GROUP BY term, frequency, length",
                (json_list(self._last_seqs), json.dumps(list(found)))):
            group = (float(frequency), int(length))
            found[term][group] = int(claims)
            self._holders[(term, group)] = holders
        return [found[term] for term in terms]

    def _runs_holding(self, term: str, group: Group, after: int) -> str:
        """The runs holding claims of the group above ``after``, oldest first, as ``json_list``."""
        held = {int(run) for run in self._holders.get((term, group), "").split(",") if run}
        return json_list(run for run, last in self._last_seqs.items() if run in held and last > after)

    def members(self, term: str, group: Group, after: int, limit: int) -> list[int]:
        """Up to ``limit`` positions in the group above ``after``, ascending (run ids ascend
        with seqs, so SQLite reads the runs in order and stops at ``limit``)."""
        return [row[0] for row in self._cursor.execute(
            f"SELECT seq FROM postings WHERE run {IN_JSON_LIST} AND term = ? "  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
            f"AND frequency = ? AND length = ? AND seq > ? ORDER BY run, seq LIMIT ?",
            (self._runs_holding(term, group, after), term, *group, after, limit))]

    def members_holding(self, term: str, group: Group, after: int,
                        others: Sequence[str]) -> list[int]:
        """Positions in the group above ``after`` holding any of ``others``, read from the group:
        a claim holds a term if its ``claim_terms`` row contains one of the term's keys
        (``_key_forms``), found with ``instr`` at a fraction of the cost of parsing the row. The
        rows read are kept for ``frequencies``, which is asked about these positions next."""
        keys = sorted({key for other in others for key in _key_forms(other) if key is not None})
        runs = self._runs_holding(term, group, after)
        found: set[int] = set()
        for start in range(0, len(keys), _KEYS_AT_ONCE):
            batch = keys[start:start + _KEYS_AT_ONCE]
            for seq, terms in self._cursor.execute(
                    f"SELECT p.seq, c.terms FROM postings AS p JOIN claim_terms AS c ON c.seq = p.seq "  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                    f"WHERE p.run {IN_JSON_LIST} AND p.term = ? AND p.frequency = ? AND p.length = ? "
                    f"AND p.seq > ? AND ({' OR '.join(['instr(c.terms, ?)'] * len(batch))})",
                    (runs, term, *group, after, *batch)):
                found.add(seq)
                self._rows[seq] = terms
        return sorted(found)

    def members_among(self, term: str, group: Group, after: int,
                      others: Sequence[str]) -> list[int]:
        """The same positions, read from ``others``' postings (a claim's postings share a run)."""
        return [row[0] for row in self._cursor.execute(
            f"SELECT DISTINCT o.seq FROM postings AS o WHERE o.run {IN_JSON_LIST} "  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
            f"AND o.term {IN_JSON_LIST} AND o.seq > ? AND EXISTS (SELECT 1 FROM postings "
            f"AS p WHERE p.run = o.run AND p.term = ? AND p.frequency = ? AND p.length = ? "
            f"AND p.seq = o.seq) ORDER BY o.seq",
            (json_list(run for run, last in self._last_seqs.items() if last > after),
             json.dumps(list(others)), after, term, *group))]

    def frequencies(self, positions: Sequence[int],
                    terms: Sequence[str]) -> dict[int, dict[str, float]]:
        """Each position's weighted frequency of those of ``terms`` it holds, read from its row
        of ``claim_terms`` (kept from ``members_holding``, else read now) without parsing it: the
        number after the term's key (``_key_forms``), up to the comma or brace that ends it."""
        unread = [position for position in positions if position not in self._rows]
        if unread:
            self._rows.update(self._cursor.execute(
                f"SELECT seq, terms FROM claim_terms WHERE seq {IN_JSON_LIST}", (json_list(unread),)))  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
        keys = [(term, key) for term in dict.fromkeys(terms) for key in _key_forms(term) if key is not None]
        held: dict[int, dict[str, float]] = {}
        for position in positions:
            row = self._rows.get(position)
            if row is None:
                continue
            for term, key in keys:
                at = row.find(key)
                if at >= 0:
                    held.setdefault(position, {})[term] = _number_at(row, at + len(key))
        return held

    def superseded(self, positions: Sequence[int]) -> set[int]:
        """Those of ``positions`` whose claims have been corrected: none, without reading the
        claims, when the snapshot holds no correction (its largest rowid, one B-tree descent)."""
        if self._corrections is None:
            self._corrections = self._cursor.execute(
                "SELECT max(rowid) IS NOT NULL FROM supersessions").fetchone()[0] == 1
        if not self._corrections:
            return set()
        return {row[0] for row in self._cursor.execute(
            f"SELECT c.seq FROM claims AS c JOIN supersessions AS s ON s.old_id = c.id "  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
            f"WHERE c.seq {IN_JSON_LIST}", (json_list(positions),))}
