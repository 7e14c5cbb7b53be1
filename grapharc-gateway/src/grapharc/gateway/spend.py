"""Dollar ceilings enforced on both sides of a call, and prices for token-only providers.

A ``SpendMeter`` refuses a call before it starts once its ceiling is reached, and
after a call charges the cost and raises if that crossed the line, so overspend is
bounded by the single call that crossed it. A call whose cost nobody reported is
never guessed: it lands in ``unpriced_calls``; ``max_unpriced_calls`` can cap those
too (the call that exceeds it raises, later ones are refused). ``TokenPrice`` turns
token counts into dollars for providers that report none.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from grapharc.errors import ConfigurationError
from grapharc.gateway.errors import SpendCeilingError


def _dollars(field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or value < 0:
        raise ConfigurationError(f"{field} must be a finite non-negative number of US dollars, "
                                 f"got {value!r}")
    return float(value)


@dataclass(frozen=True)
class TokenPrice:
    """US dollars per million tokens; cached input costs ``cached_input`` (default: ``input``)."""

    input: float
    output: float
    cached_input: float | None = None

    def __post_init__(self) -> None:
        _dollars("price_per_million input", self.input)
        _dollars("price_per_million output", self.output)
        if self.cached_input is not None:
            _dollars("price_per_million cached_input", self.cached_input)

    @classmethod
    def coerce(cls, value: Any) -> TokenPrice:
        """Accept a TokenPrice, one rate for every token, ``(input, output)``, or a mapping."""
        if isinstance(value, TokenPrice):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return cls(value, value)
        if isinstance(value, tuple | list) and len(value) == 2:
            return cls(value[0], value[1])
        if isinstance(value, Mapping) and {"input", "output"} <= set(value) \
                and set(value) <= {"input", "output", "cached_input"}:
            return cls(**value)
        raise ConfigurationError(
            f"price_per_million must be a number, (input, output) or "
            f"{{'input': ..., 'output': ..., 'cached_input': ...}}, got {value!r}")

    def cost(self, input_tokens: int, output_tokens: int, cached_tokens: int = 0) -> float:
        """Dollars for one call; ``input_tokens`` includes the ``cached_tokens``."""
        cached = min(max(cached_tokens, 0), input_tokens)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        return ((input_tokens - cached) * self.input + cached * cached_rate
                + output_tokens * self.output) / 1_000_000


class SpendMeter:
    """What a set of model calls has cost against an optional dollar ceiling; thread-safe.

    Share one meter between models to give them one ceiling. Calls that run
    concurrently all pass the check before any of them is charged, so concurrency
    widens the overspend to one call per concurrent caller.
    """

    def __init__(self, max_usd: float | None = None, *, max_unpriced_calls: int | None = None) -> None:
        self._max_usd = None if max_usd is None else _dollars("SpendMeter max_usd", max_usd)
        if max_unpriced_calls is not None and (isinstance(max_unpriced_calls, bool)
                                               or not isinstance(max_unpriced_calls, int)
                                               or max_unpriced_calls < 0):
            raise ConfigurationError(
                f"SpendMeter max_unpriced_calls must be a non-negative integer, got {max_unpriced_calls!r}")
        self._max_unpriced = max_unpriced_calls
        self._lock = threading.Lock()
        self._spent = 0.0
        self._calls = 0
        self._unpriced = 0

    @property
    def max_usd(self) -> float | None:
        """The dollar ceiling (None: unlimited)."""
        return self._max_usd

    @property
    def spent_usd(self) -> float:
        """Dollars charged so far; unpriced calls add nothing here."""
        return self._spent

    @property
    def calls(self) -> int:
        """Calls charged so far, priced or not."""
        return self._calls

    @property
    def unpriced_calls(self) -> int:
        """Calls whose cost nobody reported; > 0 means ``spent_usd`` understates the bill."""
        return self._unpriced

    def before_call(self, spec: str) -> None:
        """Refuse the call ``spec`` is about to make once dollars reach their ceiling, or once
        unpriced calls have exceeded theirs (reaching it does not stop a call that may be priced)."""
        with self._lock:
            if self._max_usd is not None and self._spent >= self._max_usd:
                raise SpendCeilingError(spec, "usd", self._max_usd, self._spent, before=True)
            if self._max_unpriced is not None and self._unpriced > self._max_unpriced:
                raise SpendCeilingError(spec, "unpriced_calls", self._max_unpriced, self._unpriced,
                                        before=True)

    def record(self, spec: str, cost_usd: float | None) -> SpendCeilingError | None:
        """Charge one finished call; return (not raise) the error if it crossed a ceiling."""
        with self._lock:
            self._calls += 1
            if cost_usd is None:
                self._unpriced += 1
                if self._max_unpriced is not None and self._unpriced > self._max_unpriced:
                    return SpendCeilingError(spec, "unpriced_calls", self._max_unpriced, self._unpriced,
                                             before=False)
                return None
            self._spent += _dollars("charged cost_usd", cost_usd)
            if self._max_usd is not None and self._spent > self._max_usd:
                return SpendCeilingError(spec, "usd", self._max_usd, self._spent, before=False)
        return None

    def charge(self, spec: str, cost_usd: float | None) -> None:
        """Charge one finished call, then raise SpendCeilingError if it crossed a ceiling."""
        crossed = self.record(spec, cost_usd)
        if crossed is not None:
            raise crossed

    def snapshot(self) -> dict[str, Any]:
        """The meter's figures as a plain dict (for traces and ``--json``)."""
        with self._lock:
            return {"max_usd": self._max_usd, "spent_usd": self._spent, "calls": self._calls,
                    "unpriced_calls": self._unpriced, "max_unpriced_calls": self._max_unpriced}
