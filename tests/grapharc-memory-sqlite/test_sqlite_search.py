"""The SQLite store's search: fixed statements with lists bound as one JSON parameter, claims'
terms found by their keys instead of parsed, and still the exact scan's top k."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grapharc.memory.sqlite.database import MAPPED_BYTES
from grapharc.memory.sqlite.postings import SQLitePostings
from grapharc.memory.sqlite.store import SQLiteMemoryStore
from grapharc.memory.terms import query_terms
from grapharc.testing.claim_search_kit import assert_exact_top_k
from grapharc.testing.claims import make_claim, varied_claims

LONG_QUERY = "Ada Lovelace wrote program compiler river harbour island language mountain"
QUERIES = ("Tokyo engine million city", "東京 notes", "Kyoto river", LONG_QUERY)


@pytest.fixture
def filled(tmp_path: Path) -> Iterator[tuple[SQLiteMemoryStore, sqlite3.Connection]]:
    """A store of 1,500 varied claims and its connection."""
    store = SQLiteMemoryStore(tmp_path / "claims.db")
    store.add_many(varied_claims(1_500))
    connection = store._connection
    assert connection is not None
    yield store, connection
    connection.set_trace_callback(None)
    store.close()


def test_a_search_binds_each_list_as_one_parameter_so_a_limit_of_64_is_never_reached(
        filled: tuple[SQLiteMemoryStore, sqlite3.Connection]) -> None:
    store, connection = filled
    connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 64)
    for query in QUERIES:
        for k in (10, 400):
            assert_exact_top_k(store, query, k)


def test_a_search_compiles_the_same_few_statements_whatever_it_reads(
        filled: tuple[SQLiteMemoryStore, sqlite3.Connection]) -> None:
    store, connection = filled
    texts: set[str] = set()
    for query in QUERIES:
        for k in (1, 10, 400):
            texts |= compiled_texts(connection, lambda q=query, n=k: store.search(q, k=n))
    # one per statement of the walk and of the store (eight), and for two of them one per
    # count of keys looked for at once (up to eight each); with a "?" per value it was 166
    assert len(texts) <= 24, sorted(texts)


def compiled_texts(connection: sqlite3.Connection, search: Callable[[], object]) -> set[str]:
    """The shapes (``shape_of``) of the statements ``search`` runs."""
    seen: list[str] = []
    connection.set_trace_callback(seen.append)
    try:
        search()
    finally:
        connection.set_trace_callback(None)
    return {shape_of(statement) for statement in seen}


def shape_of(statement: str) -> str:
    """A traced statement (SQLite traces it with its values in place) with every quoted and
    numeric value blanked: what SQLite had to compile."""
    shape, quoted = [], False
    for character in statement:
        if character == "'":
            quoted = not quoted
            shape.append("?" if quoted else "")
        elif not quoted and not (character.isdigit() or character in ".-"):
            shape.append(character)
    return "".join(shape).replace("NULL", "?")


LOOK_FOR_CORRECTIONS = "FROM claims AS c JOIN supersessions"


def test_a_search_of_a_store_without_corrections_never_looks_for_superseded_claims(
        filled: tuple[SQLiteMemoryStore, sqlite3.Connection]) -> None:
    store, connection = filled
    statements: list[str] = []
    connection.set_trace_callback(statements.append)
    store.search("Tokyo engine", k=10)
    assert not any(LOOK_FOR_CORRECTIONS in statement for statement in statements)
    old = store.all()[0]
    store.supersede(old.id, make_claim(old.subject, "a corrected value", predicate=old.predicate))
    statements.clear()
    found = store.search(f"{old.subject} {old.object}", k=300)
    assert any(LOOK_FOR_CORRECTIONS in statement for statement in statements)
    assert old.id not in {hit.claim.id for hit in found}


def test_the_frequencies_of_claims_found_holding_other_terms_come_from_the_rows_already_read(
        filled: tuple[SQLiteMemoryStore, sqlite3.Connection]) -> None:
    _store, connection = filled
    terms = query_terms("Tokyo engine million city")
    source = SQLitePostings(connection.cursor())
    sizes = source.groups(terms)[0]
    group = max(sizes, key=sizes.__getitem__)
    holding = source.members_holding(terms[0], group, -1, terms[1:])
    assert len(holding) > 10
    statements: list[str] = []
    connection.set_trace_callback(statements.append)
    kept = source.frequencies(holding, terms[1:])
    connection.set_trace_callback(None)

    assert statements == []
    assert kept == SQLitePostings(connection.cursor()).frequencies(holding, terms[1:])
    assert all(kept[position] for position in holding)


def test_the_claim_store_reads_its_file_through_a_memory_map(tmp_path: Path) -> None:
    store = SQLiteMemoryStore(tmp_path / "claims.db")
    try:
        connection = store._connection
        assert connection is not None
        assert connection.execute("PRAGMA mmap_size").fetchone() == (MAPPED_BYTES,)
    finally:
        store.close()


# letters of every script, digits and private-use characters: what a term is made of
WORDS = st.text(st.characters(categories=("Lu", "Ll", "Lo", "Nd", "Co")), min_size=1, max_size=6)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(WORDS, min_size=1, max_size=5), min_size=2, max_size=8), st.data())
def test_search_finds_the_exact_top_k_in_rows_written_either_way_for_any_words(
        tmp_path_factory: object, texts: list[list[str]], data: st.DataObject) -> None:
    # rows as terms_json writes them, then as json.dumps wrote them before (non-ASCII escaped)
    path = tmp_path_factory.mktemp("claims") / "claims.db"  # type: ignore[attr-defined]
    store = SQLiteMemoryStore(path)
    try:
        store.add_many([make_claim("Subject " + " ".join(words[:2]), " ".join(words),
                                   predicate="says " + words[-1],
                                   claim_id=f"c{n}") for n, words in enumerate(texts)])
        queries = [" ".join(data.draw(st.lists(st.sampled_from([w for ws in texts for w in ws]),
                                               min_size=1, max_size=4))) for _ in range(3)]
        for rewrite in (False, True):
            if rewrite:
                store.close()
                rewrite_terms_with_json_dumps(path)
                store = SQLiteMemoryStore(path)
            for query in queries:
                for k in (1, 3, len(texts)):
                    assert_exact_top_k(store, query, k)
    finally:
        store.close()


def rewrite_terms_with_json_dumps(path: Path) -> None:
    """Rewrite every ``claim_terms`` row as ``json.dumps`` wrote them before ``terms_json``."""
    with sqlite3.connect(path) as raw:
        rows = raw.execute("SELECT seq, terms FROM claim_terms").fetchall()
        raw.executemany("UPDATE claim_terms SET terms = ? WHERE seq = ?",
                        [(json.dumps(json.loads(terms)), seq) for seq, terms in rows])
    raw.close()
