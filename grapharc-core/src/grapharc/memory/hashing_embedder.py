"""``hashing:``, a local embedder: each term of a text hashed into one of a fixed number of dimensions.

Feature hashing (the "hashing trick"): a text's vector counts its terms (``grapharc.memory.terms``,
as the BM25 channel splits them), each added with a sign to the dimension its hash picks, so texts
sharing terms point the same way. It needs no model, no network and no state: the same text gives
the same vector in every process (BLAKE2b, not Python's salted ``hash``), which makes it the
embedder for tests, demos and a vector channel that only widens exact matches across fields. It
knows nothing of meaning: synonyms are as far apart as any two words. Written here because
scikit-learn's ``HashingVectorizer`` would bring numpy and scipy for twenty lines.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from grapharc.errors import ConfigurationError
from grapharc.memory.terms import terms

DEFAULT_DIMENSIONS = 256
MOST_DIMENSIONS = 65_536


class HashingEmbedder:
    """Texts as signed counts of their hashed terms in ``dimensions`` dimensions."""

    def __init__(self, dimensions: int = DEFAULT_DIMENSIONS) -> None:
        self.dimensions = dimensions

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        return [self._vector(text) for text in texts]

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        for term in terms(text):
            hashed = int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "big")
            vector[hashed % self.dimensions] += 1.0 if hashed >> 63 else -1.0
        return vector


def open_hashing_embedder(argument: str) -> HashingEmbedder:
    """The embedder of the spec ``hashing:`` (256 dimensions) or ``hashing:N`` (N dimensions)."""
    if not argument:
        return HashingEmbedder()
    if not argument.isdigit() or not 1 <= int(argument) <= MOST_DIMENSIONS:
        raise ConfigurationError(
            f"embedder spec 'hashing:{argument}' does not give a number of dimensions",
            hint=f"write hashing: for {DEFAULT_DIMENSIONS} dimensions, or hashing:N with N from 1 to "
                 f"{MOST_DIMENSIONS}")
    return HashingEmbedder(int(argument))
