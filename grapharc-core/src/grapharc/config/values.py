"""Kinds of number a user gives (counts, seconds, dollars, ports) and the range each may take.

One definition per kind, shared by the config settings (flags, ``GRAPHARC_*``, grapharc.toml)
and the CLI's option types (:mod:`grapharc.cli.options`), so a flag and the same setting in a
file refuse the same values in the same words. A refusal is a ``ValueError`` whose message is
the allowed range ("must be ..."); the caller names the option or setting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

MAX_DIGITS = 40
"""Longer digit strings are refused before ``int()`` sees them (it is quadratic in the length)."""


@dataclass(frozen=True)
class Count:
    """An integer from ``low`` to ``high`` inclusive, given as an int or as decimal digits."""

    low: int
    high: int

    def describe(self) -> str:
        return f"an integer from {self.low} to {self.high}"

    def __call__(self, value: Any) -> int:
        if isinstance(value, str):
            text = value.strip()
            digits = text[1:] if text[:1] in "+-" else text
            if not (digits.isascii() and digits.isdigit()) or len(digits) > MAX_DIGITS:
                raise ValueError(f"must be {self.describe()}")
            value = int(text)
        if isinstance(value, bool) or not isinstance(value, int) or not self.low <= value <= self.high:
            raise ValueError(f"must be {self.describe()}")
        return int(value)


@dataclass(frozen=True)
class Number:
    """A finite number from ``low`` (excluded when ``above`` is set) to ``high``, in ``unit``.

    NaN, infinities and anything past ``high`` are refused; ``-0`` reads as 0.
    """

    low: float
    high: float
    unit: str = ""
    above: bool = True

    def describe(self) -> str:
        what = f"a number of {self.unit}" if self.unit else "a number"
        lower = f"above {_short(self.low)}" if self.above else f"at least {_short(self.low)}"
        return f"{what} {lower} and at most {_short(self.high)}"

    def __call__(self, value: Any) -> float:
        number = _as_float(value)
        low_ok = number > self.low if self.above else number >= self.low
        if not math.isfinite(number) or not low_ok or number > self.high:
            raise ValueError(f"must be {self.describe()}")
        return number + 0.0


def _short(number: float) -> str:
    """``number`` as people write it: 30, 0.5, 1e9 (not Python's 1e+09)."""
    text = f"{number:g}"
    mantissa, _, exponent = text.partition("e")
    return f"{mantissa}e{int(exponent)}" if exponent else text


def _as_float(value: Any) -> float:
    """An int, float or numeric string as a float; NaN for anything else (so it is refused)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return math.nan
    if isinstance(value, str) and len(value) > MAX_DIGITS * 2:
        return math.nan
    try:
        return float(value)
    except (ValueError, OverflowError):
        return math.nan


SECONDS = Number(0, 10**9, "seconds")
"""A wall-clock budget or timeout: above 0, at most 1e9 seconds (about 31 years)."""
DOLLARS = Number(0, 10**9, "US dollars")
"""A dollar budget or price: above 0, at most one billion."""
PRICE_PER_MILLION = Number(0, 10**6, "US dollars per million tokens", above=False)
"""A rate: from 0 (free) to a million dollars per million tokens, so no estimate overflows."""
LEASE_SECONDS = Number(1, 86_400, "seconds", above=False)
"""A runner's lease between heartbeats: at least a second (its heartbeat, a third of it, must
not spin) and at most a day (longer only delays a takeover)."""
PORT = Count(0, 65_535)
"""A TCP port; 0 asks the system for a free one."""
