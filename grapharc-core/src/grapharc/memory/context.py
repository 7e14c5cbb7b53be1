"""``render_context``: claims as lines of text for a prompt, within a token budget.

Each claim becomes one line with its provenance, and a superseded claim says
what replaced it, so a node sees both the fact and where it came from. Tokens
are estimated, not counted with a model's tokenizer: one token per four ASCII
characters (rounded up) plus one per other character, which errs high for
non-Latin scripts, so a budget is rarely overrun.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from grapharc.memory.claims import Claim, InvalidSearchError, ScoredClaim
from grapharc.memory.retrieval import Hit


def estimate_tokens(text: str) -> int:
    """Estimated tokens in ``text``: ceil(ASCII characters / 4) + other characters."""
    ascii_chars = sum(1 for char in text if char.isascii())
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)


def render_claim(claim: Claim) -> str:
    """One line: the fact, then its source, observation time, run and any successor."""
    provenance = claim.provenance
    notes = [f"source: {provenance.source}",
             f"observed {provenance.observed_at.isoformat(timespec='seconds')}"]
    if provenance.run_id is not None:
        notes.append(f"run {provenance.run_id}")
    if claim.superseded_by is not None:
        notes.append(f"superseded by {claim.superseded_by}")
    return f"- {claim.subject} | {claim.predicate} | {claim.object} ({'; '.join(notes)})"


def render_context(items: Iterable[Hit | ScoredClaim | Claim], max_tokens: int) -> str:
    """Render ``items`` in the order given, one line each, keeping within ``max_tokens``.

    A line that does not fit the remaining budget is left out and later, shorter
    lines may still be kept; the result is empty when nothing fits.
    """
    if max_tokens < 1:
        raise InvalidSearchError(f"render_context got max_tokens={max_tokens}",
                                 hint="give a budget of at least one token")
    lines: list[str] = []
    remaining = max_tokens
    for item in items:
        line = render_claim(item if isinstance(item, Claim) else item.claim)
        cost = estimate_tokens(line + "\n")
        if cost <= remaining:
            lines.append(line)
            remaining -= cost
    return "\n".join(lines)
