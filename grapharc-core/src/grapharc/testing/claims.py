"""Claims to test with, under one fixed provenance: one field at a time (``make_claim``) or many,
varied and reproducible (``varied_claims``)."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from grapharc.memory.claims import Claim, Provenance

OBSERVED_AT = datetime(2024, 5, 1, 12, 30, 15, 123456, tzinfo=UTC)


def make_claim(
    subject: str,
    value: str = "a value",
    *,
    predicate: str = "has",
    claim_id: str | None = None,
    run_id: str | None = None,
) -> Claim:
    """Build a claim with a fixed provenance, for tests that care about one field at a time."""
    provenance = Provenance(source="conformance-kit", observed_at=OBSERVED_AT, run_id=run_id)
    fields = {"subject": subject, "predicate": predicate, "object": value}
    if claim_id is not None:
        fields["id"] = claim_id
    return Claim(provenance=provenance, **fields)


_SUBJECTS = ("Ada Lovelace", "Charles Babbage", "Tokyo", "東京", "Kyoto", "Grace Hopper",
             "Analytical Engine", "COBOL", "Mount Fuji", "नई दिल्ली")
_PREDICATES = ("worked with", "designed", "population", "located in", "wrote", "born in")
_WORDS = ("engine", "program", "million", "city", "island", "Tokyo", "notes", "compiler",
          "Babbage", "mountain", "river", "東京", "language", "harbour")


def varied_claims(count: int, seed: int = 13) -> list[Claim]:
    """``count`` claims with repeating subjects, predicates and object words, reproducibly."""
    rng = random.Random(seed)  # noqa: S311 -- seeded test data, not a secret
    return [make_claim(rng.choice(_SUBJECTS), " ".join(rng.sample(_WORDS, rng.randint(1, 4))),
                       predicate=rng.choice(_PREDICATES), claim_id=f"v{n:04d}")
            for n in range(count)]
