"""Claim ids per normalised subject, kept in memory by stores whose engine has no such index.

``about`` then costs the claims about one entity, not a pass over every claim;
the retrieval walk asks it once per claim it expands. Not thread-safe on its
own: the store that owns it serialises access.
"""

from __future__ import annotations

from grapharc.memory.claims import Claim, normalise_entity


class SubjectIndex:
    """For each normalised subject, the ids of the claims about it in insertion order."""

    def __init__(self) -> None:
        self._ids: dict[str, list[str]] = {}

    def add(self, claim: Claim) -> None:
        """Record a newly stored claim under its subject."""
        self._ids.setdefault(claim.subject_key, []).append(claim.id)

    def ids_about(self, subject: str) -> list[str]:
        """The ids of every claim (superseded too) whose subject normalises as ``subject``'s."""
        return list(self._ids.get(normalise_entity(subject), ()))
