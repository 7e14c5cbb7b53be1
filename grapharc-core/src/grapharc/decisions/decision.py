"""What a rule says about what it matches: deny, ask or allow, evaluated in that order.

Policy documents, the planner's node and edge rules and the agent's tool permissions all decide
with it, so it lives below all three (``grapharc.harness.permissions`` re-exports it, the public
path the docs show).
"""

from __future__ import annotations

from enum import StrEnum


class Decision(StrEnum):
    """What a rule says about the thing it matches, in evaluation order."""

    DENY = "deny"
    ASK = "ask"
    ALLOW = "allow"


TIERS: tuple[Decision, ...] = (Decision.DENY, Decision.ASK, Decision.ALLOW)
"""Every deny before every ask before every allow: a broad deny beats a narrow allow."""
