"""The readings of an event's fields every trace reader shares.

The names themselves are in :mod:`grapharc.trace.schema`. Which event's tokens are charged
where is decided in one place, :mod:`grapharc.observe.tally`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from grapharc.trace.schema import (
    ATTEMPT,
    CALLS,
    COST_USD,
    GRAPH,
    INPUT_TOKENS,
    MODEL,
    MODELS,
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


ModelShare = tuple[str | None, int, int, int | None, int | None]
"""(model or None, calls, total, input, output tokens) of the part of an event's tokens one model spent."""


def model_shares(event: dict[str, Any], total: int, input_tokens: int | None,
                 output_tokens: int | None) -> list[ModelShare]:
    """An event's ``total`` tokens split by the model that spent them.

    The kernel writes a ``models`` breakdown on a node's ``end``; tokens it does not cover (a
    charge of no named model) are a share of no model. An event without a well-formed breakdown
    is one share: of its own ``model`` (one call) if it names one, else of no model.
    """
    breakdown = event.get(MODELS)
    if isinstance(breakdown, dict) and breakdown:
        shares = _breakdown_shares(breakdown, total)
        if shares is not None:
            return shares
    model = event.get(MODEL)
    if isinstance(model, str) and model:
        return [(model, 1, total, input_tokens, output_tokens)]
    return [(None, 0, total, input_tokens, output_tokens)] if total else []


def _breakdown_shares(breakdown: dict[Any, Any], total: int) -> list[ModelShare] | None:
    """The shares of a ``models`` breakdown, or None when it is malformed or claims more than ``total``."""
    shares: list[ModelShare] = []
    covered = 0
    for model, figures in breakdown.items():
        if type(figures) is not dict:
            return None
        calls, tokens = figures.get(CALLS), figures.get(TOKENS)
        if type(calls) is not int or type(tokens) is not int or calls < 0 or tokens < 0:
            return None
        split_in, split_out = figures.get(INPUT_TOKENS), figures.get(OUTPUT_TOKENS)
        if type(split_in) is not int or type(split_out) is not int or split_in < 0 or split_out < 0:
            split_in = split_out = None
        shares.append((str(model), calls, tokens, split_in, split_out))
        covered += tokens
    if covered > total:
        return None
    if covered < total:
        shares.append((None, 0, total - covered, None, None))
    return shares


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
