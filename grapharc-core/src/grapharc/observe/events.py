"""The readings of an event's fields every trace reader shares.

The names themselves are in :mod:`grapharc.trace.schema`. Which event's tokens are charged
where is decided in one place, :mod:`grapharc.observe.tally`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from grapharc.trace.schema import (
    ATTEMPT,
    COST_USD,
    GRAPH,
    INPUT_TOKENS,
    NODE,
    OUTPUT_TOKENS,
    RUN_ID,
    STEP,
    TOKENS,
)


def token_figures(event: dict[str, Any]) -> tuple[int, int | None, int | None]:
    """(total, input, output) tokens an event reports; input/output None unless both are given.

    The kernel writes ``tokens`` as an int (None or absent counts as 0); ``input_tokens`` and
    ``output_tokens`` beside it let a rate card price the two sides separately.
    """
    tokens = event.get(TOKENS)
    total = tokens if type(tokens) is int else (int(tokens) if isinstance(tokens, float) else 0)
    split_in, split_out = event.get(INPUT_TOKENS), event.get(OUTPUT_TOKENS)
    if type(split_in) is int and type(split_out) is int:
        return total, split_in, split_out
    return total, None, None


def recorded_cost(event: dict[str, Any]) -> float | None:
    """The provider-reported ``cost_usd`` on an event, or None when none was reported."""
    cost = event.get(COST_USD)
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        return float(cost)
    return None


def seconds(ts: Any) -> float | None:
    """An event's ``ts`` as epoch seconds: the kernel writes ``time.time()``; ISO text is read too."""
    if isinstance(ts, int | float) and not isinstance(ts, bool):
        return float(ts)
    if isinstance(ts, str):
        try:
            return datetime.fromisoformat(ts).timestamp()
        except ValueError:
            return None
    return None


def execution_key(event: dict[str, Any]) -> tuple[Any, ...]:
    """Identity of one node execution: run, attempt, graph, node and step."""
    return (event.get(RUN_ID), event.get(ATTEMPT), event.get(GRAPH), event.get(NODE), event.get(STEP))
