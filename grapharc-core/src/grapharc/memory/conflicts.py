"""``contradictions``: stored claims a new claim disagrees with, reported and never resolved.

Two claims disagree when their normalised subjects and predicates match and
their objects differ after folding case, width and whitespace. The test is
structural: it does not relate "is fast" to "is slow", and it flags a
legitimately multi-valued predicate too, which is why it never supersedes
anything; a caller corrects on purpose or not at all.
"""

from __future__ import annotations

import unicodedata

from grapharc.memory.claims import Claim, ClaimStore


def fold(text: str) -> str:
    """``text`` with case, width and whitespace folded, as objects and predicates are compared."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def contradictions(store: ClaimStore, new_claim: Claim) -> list[Claim]:
    """The current claims in ``store`` that ``new_claim`` contradicts, oldest first; writes nothing."""
    predicate, value = fold(new_claim.predicate), fold(new_claim.object)
    return [claim for claim in store.about(new_claim.subject)
            if claim.id != new_claim.id and fold(claim.predicate) == predicate
            and fold(claim.object) != value]
