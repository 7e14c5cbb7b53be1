"""Claim memory: facts with provenance in a SQLite file, a correction, retrieval and context.

Claims are (subject, predicate, object) facts that must say where they came from. A
correction supersedes a claim and keeps the old one in its history. ``retrieve`` finds
the claims a question needs (BM25F, then one hop along the entities it found) and
``render_context`` turns them into prompt lines that carry their provenance.

Run it from the repository root after ``make install`` (needs grapharc-memory-sqlite):

    .venv/bin/python examples/claim_memory.py [CLAIMS_FILE]

The claims go to CLAIMS_FILE (default: a temporary folder's ``claims.db``); the file is
opened a second time to show that what was written is still there.
"""

from __future__ import annotations

import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from grapharc.memory import Claim, ClaimStore, Provenance, render_context, retrieve
from grapharc.stores.uris import open_store

LETTERS = Provenance(source="letters.txt", observed_at=datetime(2026, 1, 5, tzinfo=UTC))
CENSUS = Provenance(source="census-2025.csv", observed_at=datetime(2026, 2, 1, tzinfo=UTC))


def remember(store: ClaimStore) -> None:
    """Store three claims in one transaction, then correct one of them."""
    store.add_many([
        Claim(subject="Ada Lovelace", predicate="worked with", object="Charles Babbage",
              provenance=LETTERS),
        Claim(subject="Charles Babbage", predicate="designed", object="the Analytical Engine",
              provenance=LETTERS),
        Claim(subject="Tokyo", predicate="population", object="14 million", provenance=LETTERS),
    ])
    (old,) = store.about("Tokyo")
    new = store.supersede(old.id, Claim(subject="Tokyo", predicate="population",
                                        object="13.96 million", provenance=CENSUS))
    print("corrected:", " -> ".join(claim.object for claim in store.history(new.id)))


def recall(store: ClaimStore, question: str) -> None:
    """Retrieve the claims a question needs and print them as a model's context."""
    hits = retrieve(store, question, k=5, hops=1)
    print(f"context for {question!r}:")
    print(render_context(hits, max_tokens=200))


def main(path: Path) -> None:
    """Write the claims to ``path``, then reopen the file and read them back."""
    store = open_store(f"sqlite:{path}", "claims")
    try:
        remember(store)
    finally:
        store.close()
    reopened = open_store(f"sqlite:{path}", "claims")
    try:
        print(f"{path.name}: {len(reopened.all())} current claims, "
              f"{len(reopened.all(include_superseded=True))} stored")
        recall(reopened, "What did Ada Lovelace do?")
        recall(reopened, "How many people live in Tokyo?")
    finally:
        reopened.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "claims.db")
