"""The trace's event vocabulary and the readings of an event's fields every reader shares.

Node executions are ``start`` events and the events that close them (``end``, ``error``,
``interrupt``, ``parent_command``) of a named node outside the admission phase. Which
event's tokens are charged where is decided in one place, :mod:`grapharc.observe.tally`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

START: Final = "start"
END: Final = "end"
ERROR: Final = "error"
RUN_START: Final = "run_start"
RUN_END: Final = "run_end"
ADMISSION_PHASE: Final = "admission"
INTERRUPT: Final = "interrupt"
PARENT_COMMAND: Final = "parent_command"
CLOSING_EVENTS: Final = frozenset({END, ERROR, INTERRUPT, PARENT_COMMAND})
"""Events that finish a node execution that a ``start`` opened."""
RUN_EVENTS: Final = frozenset({RUN_START, RUN_END})


def token_figures(event: dict[str, Any]) -> tuple[int, int | None, int | None]:
    """(total, input, output) tokens an event reports; input/output None unless both are given.

    The kernel writes ``tokens`` as an int (None or absent counts as 0); ``input_tokens`` and
    ``output_tokens`` beside it let a rate card price the two sides separately.
    """
    tokens = event.get("tokens")
    total = tokens if type(tokens) is int else (int(tokens) if isinstance(tokens, float) else 0)
    split_in, split_out = event.get("input_tokens"), event.get("output_tokens")
    if type(split_in) is int and type(split_out) is int:
        return total, split_in, split_out
    return total, None, None


def recorded_cost(event: dict[str, Any]) -> float | None:
    """The provider-reported ``cost_usd`` on an event, or None when none was reported."""
    cost = event.get("cost_usd")
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
    return (event.get("run_id"), event.get("attempt"), event.get("graph"), event.get("node"),
            event.get("step"))
