"""Convergence: end a cycle with a machine-readable reason instead of running out of road."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Hashable
from enum import StrEnum
from typing import Any

from grapharc.errors import GraphARCError
from grapharc.runtime.context import record_stop_reason


class StopReason(StrEnum):
    """Why a cycle stopped; the value is what traces and metrics record."""

    TARGET_MET = "target_met"
    NO_PROGRESS = "no_progress"
    ROUND_CAP = "round_cap"


class InvalidProgressGuardError(GraphARCError):
    """A ProgressGuard was configured with arguments it cannot work with."""


class ProgressGuard:
    """Decides once per round whether a cycle should stop, and why.

    ``check(state)`` returns the first triggered reason, in this order: ``target(state)`` is true
    (TARGET_MET); the measure made no progress for ``window`` consecutive rounds (NO_PROGRESS);
    this is round ``max_rounds`` (ROUND_CAP). Otherwise None.

    Progress, exactly: a numeric measure (a real number, not a bool) progresses when it is
    strictly greater than the best value seen so far; any other measure progresses when it is a
    value never seen before in this guard's life. The first measured round always progresses.
    A NaN never progresses. Without a measure there is no NO_PROGRESS stop. A reason returned
    inside a run is also noted on the run, so its ``run_end`` says what stopped it.
    """

    def __init__(
        self,
        *,
        max_rounds: int,
        target: Callable[[Any], bool] | None = None,
        measure: Callable[[Any], Hashable | float] | None = None,
        window: int = 3,
    ) -> None:
        self.max_rounds = _at_least_one("max_rounds", max_rounds)
        self.window = _at_least_one("window", window)
        for name, value in (("target", target), ("measure", measure)):
            if value is not None and not callable(value):
                raise InvalidProgressGuardError(
                    f"ProgressGuard {name} must be a callable taking the state, got {value!r}"
                )
        self.target = target
        self.measure = measure
        self.rounds = 0
        self._stale = 0
        self._best: Any = None
        self._seen: set[Hashable] = set()

    def check(self, state: Any) -> StopReason | None:
        """Count one round over ``state`` and return the first stop reason that applies."""
        reason = self._judge(state)
        if reason is not None:
            record_stop_reason(reason.value)
        return reason

    def _judge(self, state: Any) -> StopReason | None:
        self.rounds += 1
        if self.target is not None and self.target(state):
            return StopReason.TARGET_MET
        if self.measure is not None:
            self._stale = 0 if self._progressed(self.measure(state)) else self._stale + 1
            if self._stale >= self.window:
                return StopReason.NO_PROGRESS
        if self.rounds >= self.max_rounds:
            return StopReason.ROUND_CAP
        return None

    def reset(self) -> None:
        """Forget every round, as if the guard had just been made."""
        self.rounds = 0
        self._stale = 0
        self._best = None
        self._seen.clear()

    def _progressed(self, value: Any) -> bool:
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            if value != value:  # NaN
                return False
            if self._best is None or value > self._best:
                self._best = value
                return True
            return False
        try:
            if value in self._seen:
                return False
            self._seen.add(value)
        except TypeError:
            raise InvalidProgressGuardError(
                f"ProgressGuard measure returned an unhashable {type(value).__name__}: {value!r}",
                hint="return a number, or a hashable summary such as a tuple or a frozenset",
            ) from None
        return True


def _at_least_one(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidProgressGuardError(
            f"ProgressGuard {name} must be an integer of at least 1, got {value!r}"
        )
    return value
