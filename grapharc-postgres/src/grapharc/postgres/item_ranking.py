"""A ``query`` search of the PostgreSQL item store, ranked inside PostgreSQL in two statements whose
server-side work is bounded by what can still reach the top k (MaxScore over impact-ordered groups).

The first statement reads the query terms' groups (``item_postings``: every item in a group of a
term, a (frequency, length) pair, gets the same BM25 contribution) with the totals. From them this
process computes each group's contribution (``bm25f.term_score``, as the impact walk does) and its
bound, and the second statement, which PostgreSQL runs alone, does the rest:
- seeds: the first items of the best groups, best contribution first, scored in full; the k-th
  best of those in the search's scope is a floor no item of the top k scores below;
- candidates: the terms are ranked rarest first, and an item is looked for only under the first
  of them it holds: a group is read only if its contribution plus the best the later terms add
  to an item of its length reaches the floor. So a common term (small contributions), ranked
  last, is read only in the groups that could lift an item into the top k on their own;
- every candidate in scope is scored from its ``frequencies``, ``term_score``'s operations in the
  same order over float8 (IEEE doubles, as Python's floats), summed in query-term order as
  ``bm25f.scan`` sums them; the best k return, ties oldest write first.
Every item that can reach the top k is a seed or a candidate, so the result is the scan's, scores
equal to the bit. The work is the seeds and candidates: more seeds when the floor from a few would
leave many candidates (estimated from the group sizes), at most ``MOST_SEEDS``. A namespace or
filter that few items pass lowers the floor; when fewer than k seeds are in scope there is none,
the statement ranks the seeds alone, and it is sent again with ``MORE_SEEDS`` times as many, until
k are in scope or every posting of the query terms is a seed. A PL/pgSQL walk was not taken: the
scope (namespace, expiry and filter) is SQL built per search, which a function could only run as
dynamic SQL, planned anew on every call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from grapharc.memory.bm25f import K1, B, idf, term_score
from grapharc.postgres.database import Conn

Group = tuple[float, int]  # (frequency of a term in an item, the item's length)

FIRST_SEEDS = 16
"""Seeds read beyond k at least (the impact walk's first read)."""
SEEDS_PER_REACH = 8
"""One seed per this many postings the groups within reach of a first, rough floor hold: a query
whose candidates could be many reads more seeds, for a floor nearer the top k's."""
MOST_SEEDS = 500
MORE_SEEDS = 8
"""How many times more seeds a search reads again when fewer than k of its seeds were in scope."""
SLACK = 1e-9
"""How far below the floor (relatively) a group's bound may fall and still be read: a bound sums
contributions in another order than a score does, so it may round an ulp low."""


def _groups(conn: Conn, terms: Sequence[str]) -> tuple[list[dict[Group, int]], int, int]:
    """Each term's groups with their sizes, the items indexed and their summed length: one statement."""
    found: dict[str, dict[Group, int]] = {term: {} for term in terms}
    total = total_length = 0
    for row in conn.execute(
            "SELECT g.term, g.frequency, g.length, g.items, t.items AS total, t.length AS total_length "
            "FROM grapharc_store_groups AS g, grapharc_store_totals AS t WHERE g.term = ANY(%s)",
            (list(terms),)):
        found[row["term"]][(float(row["frequency"]), int(row["length"]))] = int(row["items"])
        total, total_length = int(row["total"]), int(row["total_length"])
    return [found[term] for term in terms], total, total_length


def _rests(sizes: list[dict[Group, int]],
           contributions: list[dict[Group, float]]) -> list[dict[int, float]]:
    """Per term and length, the most the terms ranked after it (rarest first) add to an item of
    that length: each later term's best contribution at that length."""
    ranked = sorted(range(len(sizes)), key=lambda slot: (sum(sizes[slot].values()), slot))
    best: list[dict[int, float]] = [{} for _ in sizes]
    for found, at_length in zip(contributions, best, strict=True):
        for (_, length), score in found.items():
            at_length[length] = max(score, at_length.get(length, 0.0))
    rests: list[dict[int, float]] = [{} for _ in sizes]
    for place, slot in enumerate(ranked):
        for _, length in sizes[slot]:
            rests[slot][length] = sum((best[later].get(length, 0.0) for later in ranked[place + 1:]), 0.0)
    return rests


def _seed_count(steps: list[tuple[float, int, Group, float]], sizes: list[dict[Group, int]],
                k: int) -> int:
    """How many seeds to read: k and ``FIRST_SEEDS``, or one per ``SEEDS_PER_REACH`` postings in
    the groups whose bound reaches the contribution of the k-th best posting (a rough floor)."""
    held, rough = 0, 0.0
    for score, slot, group, _ in steps:
        held += sizes[slot][group]
        if held >= k:
            rough = score
            break
    reach = sum(sizes[slot][group] for score, slot, group, rest in steps if score + rest >= rough)
    return min(max(k + FIRST_SEEDS, reach // SEEDS_PER_REACH), MOST_SEEDS)


@dataclass(frozen=True)
class _Bounds:
    """One search's groups, best contribution first: (contribution, slot, group, rest), where rest
    is the most the terms ranked after the group's add to an item of its length; and their sizes."""

    idfs: list[float]
    steps: list[tuple[float, int, Group, float]]
    sizes: list[dict[Group, int]]

    def seeds(self, count: int) -> list[tuple[int, float, int, int]]:
        """The groups the first ``count`` postings in walk order fill: (slot, frequency, length, items)."""
        seeds = []
        for _, slot, group, _ in self.steps:
            if count <= 0:
                break
            taken = min(count, self.sizes[slot][group])
            seeds.append((slot + 1, *group, taken))
            count -= taken
        return seeds


def _bounds(sizes: list[dict[Group, int]], total: int, total_length: int) -> _Bounds:
    """The contributions (as ``impact_walk`` computes them) and bounds of one search's groups."""
    average = total_length / total
    idfs = [idf(total, sum(groups.values())) for groups in sizes]
    contributions = [{group: term_score(term_idf, *group, average) for group in groups}
                     for term_idf, groups in zip(idfs, sizes, strict=True)]
    rests = _rests(sizes, contributions)
    steps = sorted(((score, slot, group, rests[slot][group[1]]) for slot, found in enumerate(contributions)
                    for group, score in found.items()), key=lambda step: -step[0])
    return _Bounds(idfs, steps, sizes)


_SCORED = """SELECT c.written, sum(q.idf * (h.f * (m.k1 + 1.0::float8))
        / (h.f + m.k1 * (1 - m.b + m.b * c.length / m.average)) ORDER BY q.slot) AS score
    FROM {items} AS c CROSS JOIN m CROSS JOIN q
    CROSS JOIN LATERAL (SELECT (c.frequencies ->> q.term)::float8 AS f) AS h
    WHERE h.f IS NOT NULL GROUP BY c.written"""
"""Each item of ``{items}`` (written, length, frequencies) with its score: ``bm25f.term_score`` of
each query term it holds, written as Python evaluates it, summed in query-term order."""

_IN_GROUP = ("SELECT written FROM grapharc_store_postings AS p WHERE p.term = q.term "
             "AND p.frequency = {group}.frequency AND p.length = {group}.length")

_RANKED = f"""WITH m(k1, b, average) AS (VALUES (%s::float8, %s::float8, %s::float8)),
q(term, idf, slot) AS (SELECT * FROM unnest(%s::text[], %s::float8[]) WITH ORDINALITY),
g(slot, frequency, length, contribution, rest) AS (
    SELECT * FROM unnest(%s::int[], %s::float8[], %s::int[], %s::float8[], %s::float8[])),
seeded AS (SELECT written, length, frequencies FROM grapharc_store_items WHERE written IN (
    SELECT p.written FROM unnest(%s::int[], %s::float8[], %s::int[], %s::int[])
        AS s(slot, frequency, length, n) JOIN q ON q.slot = s.slot
    CROSS JOIN LATERAL ({_IN_GROUP.format(group="s")} ORDER BY p.written LIMIT s.n) AS p) AND {{scope}}),
seed_scores AS MATERIALIZED ({_SCORED.format(items="seeded")}),
floor(cut) AS MATERIALIZED (SELECT theta - abs(theta) * %s FROM (
    SELECT score AS theta FROM seed_scores ORDER BY score DESC LIMIT 1 OFFSET %s) AS kth),
candidates AS (SELECT written, length, frequencies FROM grapharc_store_items WHERE written IN (
    SELECT p.written FROM g CROSS JOIN floor JOIN q ON q.slot = g.slot
    CROSS JOIN LATERAL ({_IN_GROUP.format(group="g")}) AS p WHERE g.contribution + g.rest >= floor.cut)
    AND written NOT IN (SELECT written FROM seed_scores) AND {{scope}})
SELECT written, score FROM ({_SCORED.format(items="candidates")}
    UNION ALL SELECT written, score FROM seed_scores) AS c
ORDER BY score DESC, written LIMIT %s"""  # noqa: S608 -- GraphARC's own constants; values are bound
"""The ranking statement; ``{scope}`` is the search's condition on ``grapharc_store_items``."""


def rank(conn: Conn, terms: Sequence[str], scope: str, parameters: Sequence[Any],
         k: int) -> list[tuple[float, int]]:
    """The ``k`` best (score, written) of the items in ``scope`` (a ``WHERE`` expression over
    ``grapharc_store_items``, with its parameters) holding any of ``terms``, best first."""
    sizes, total, total_length = _groups(conn, terms)
    if not any(sizes):
        return []
    bounds = _bounds(sizes, total, total_length)
    postings = sum(sum(groups.values()) for groups in sizes)
    count = _seed_count(bounds.steps, sizes, k)
    statement = _RANKED.format(scope=scope)
    groups = [list(column) for column in zip(*((slot + 1, *group, score, rest)
                                               for score, slot, group, rest in bounds.steps), strict=True)]
    while True:
        seeds = [list(column) for column in zip(*bounds.seeds(count), strict=True)]
        rows = conn.execute(statement, [K1, B, total_length / total, list(terms), bounds.idfs, *groups,
                                        *seeds, *parameters, SLACK, k - 1, *parameters, k]).fetchall()
        if len(rows) >= k or count >= postings:
            return [(row["score"], row["written"]) for row in rows]
        count *= MORE_SEEDS  # fewer than k seeds in scope: no floor, so only the seeds were ranked
