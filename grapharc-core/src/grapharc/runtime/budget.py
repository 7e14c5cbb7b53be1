"""A run's budget (what it may spend) and its meter (what it has spent), shared by every node.

The meter is charged by the runtime itself — iterations at each node start, tokens and dollars by
the usage callback at each model call — so a node cannot under-report; it only has to be in scope.

Dollars fail closed. A call whose provider reported no price is counted in ``unpriced_calls``;
under a ``max_cost_usd`` ceiling that call ends the run (``UnpricedCallError``, a
``BudgetExceededError`` on ``cost_usd``), because the run's spend is no longer known and a
ceiling that only counted would promise what it cannot keep. Price the backend
(``price_per_million=``) or bound such a run with ``max_tokens`` instead.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from time import monotonic
from typing import Any, TypedDict

from grapharc.errors import GraphARCError
from grapharc.runtime.deadline import MAX_DEADLINE_SECONDS


class InvalidBudgetError(GraphARCError):
    """A budget or meter was given a value it cannot enforce."""

    def __init__(self, field: str, value: object, expected: str) -> None:
        super().__init__(
            f"{field} must be {expected}, got {value!r}",
            hint="use None for no limit" if field.startswith("Budget.") else "",
        )
        self.field = field
        self.value = value


def amount(dimension: str, value: float) -> str:
    """A quantity as people read it: ``$0.3`` for dollars (to the micro-dollar), else the number."""
    return f"${round(value, 6)}" if dimension == "cost_usd" else str(value)


def _where(node: str | None) -> str:
    return f" (node {node!r})" if node is not None else ""


class Remaining(TypedDict):
    """What a run has left per consumable dimension (``BudgetMeter.remaining``); None is unlimited."""

    iterations: int | None
    tokens: int | None
    seconds: float | None
    cost_usd: float | None


class BudgetExceededError(GraphARCError):
    """A run spent past one of its ceilings; ``dimension`` says which one.

    ``limit`` and ``used`` are counts for iterations and tokens, and numbers of seconds or US
    dollars for ``seconds`` and ``cost_usd``.
    """

    def __init__(self, dimension: str, limit: float, used: float, node: str | None = None) -> None:
        super().__init__(
            f"{dimension} budget exceeded{_where(node)}: {amount(dimension, used)} used of a limit "
            f"of {amount(dimension, limit)}",
            hint=f"raise the budget's max_{dimension} or make the run cheaper",
        )
        self._record(dimension, limit, used, node)

    def _record(self, dimension: str, limit: float, used: float, node: str | None) -> None:
        self.dimension = dimension
        self.limit = limit
        self.used = used
        self.node = node

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (type(self), (self.dimension, self.limit, self.used, self.node))


class UnpricedCallError(BudgetExceededError):
    """A model call reported no price under a dollar ceiling, so the ceiling can no longer be kept."""

    hint = ("price the backend (e.g. get_model(..., price_per_million=...)), or bound the run "
            "with max_tokens instead of max_cost_usd")

    def __init__(self, limit: float, used: float, unpriced_calls: int, node: str | None = None) -> None:
        GraphARCError.__init__(
            self,
            f"cost_usd budget cannot be kept{_where(node)}: {unpriced_calls} model call(s) "
            f"reported no price, so the run has spent an unknown amount beyond the "
            f"{amount('cost_usd', used)} priced so far (limit {amount('cost_usd', limit)})",
        )
        self._record("cost_usd", limit, used, node)
        self.unpriced_calls = unpriced_calls

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (type(self), (self.limit, self.used, self.unpriced_calls, self.node))


@dataclass(frozen=True, slots=True)
class Budget:
    """Per-run ceilings; ``None`` in any dimension means unlimited.

    ``max_concurrency`` caps parallel workers rather than being consumed, so the meter does not
    count it. ``max_seconds`` may be ``inf``; timers use ``effective_seconds`` (clamped to
    ``MAX_DEADLINE_SECONDS``, 31 days) so one can always be armed. ``max_cost_usd`` is US dollars
    as providers report them, finite and above 0.
    """

    max_iterations: int | None = None
    max_tokens: int | None = None
    max_seconds: float | None = None
    max_concurrency: int | None = None
    max_cost_usd: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_iterations", "max_tokens", "max_concurrency"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _positive_int(f"Budget.{name}", value))
        if self.max_seconds is not None:
            object.__setattr__(self, "max_seconds", _positive_seconds(self.max_seconds))
        if self.max_cost_usd is not None:
            object.__setattr__(self, "max_cost_usd", _positive_dollars(self.max_cost_usd))

    def tightened(self, other: Budget | None) -> Budget:
        """The stricter of this budget and ``other`` in every dimension (None is unlimited)."""
        if other is None:
            return self
        return Budget(**{name: _stricter(getattr(self, name), getattr(other, name))
                         for name in BUDGET_DIMENSIONS})

    @property
    def effective_seconds(self) -> float | None:
        """``max_seconds`` clamped to what a timer can be armed with (None when unlimited)."""
        if self.max_seconds is None:
            return None
        return min(self.max_seconds, MAX_DEADLINE_SECONDS)


RUN_BUDGET_KEY = "grapharc_budget"  # a Budget in a run's configurable tightens the graph's for that run
BUDGET_DIMENSIONS = ("max_iterations", "max_tokens", "max_seconds", "max_concurrency", "max_cost_usd")


def _stricter(mine: Any, theirs: Any) -> Any:
    if mine is None:
        return theirs
    return mine if theirs is None else min(mine, theirs)


def _positive_int(field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InvalidBudgetError(field, value, "a positive integer or None")
    return int(value)


def _positive_seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value) or value <= 0:
        raise InvalidBudgetError("Budget.max_seconds", value, "a positive number of seconds or None")
    return float(value)


def _positive_dollars(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or value <= 0:
        raise InvalidBudgetError("Budget.max_cost_usd", value,
                                 "a finite positive number of US dollars or None")
    return float(value)


def _count(field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidBudgetError(field, value, "a non-negative integer")
    return int(value)


def _cost(field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise InvalidBudgetError(field, value, "a finite non-negative number of US dollars")
    return float(value)


class BudgetMeter:
    """What a run has spent against its Budget; thread-safe, shared by parallel workers.

    Start it with earlier counts to carry spend across a resume.
    """

    def __init__(
        self, budget: Budget, *, iterations: int = 0, tokens: int = 0, cost_usd: float = 0.0,
        unpriced_calls: int = 0,
    ) -> None:
        self._budget = budget
        self._lock = threading.Lock()
        self._iterations = _count("BudgetMeter iterations", iterations)
        self._tokens = _count("BudgetMeter tokens", tokens)
        self._cost_usd = _cost("BudgetMeter cost_usd", cost_usd)
        self._unpriced_calls = _count("BudgetMeter unpriced_calls", unpriced_calls)
        self.started_at = monotonic()

    @property
    def budget(self) -> Budget:
        """The ceilings this meter enforces."""
        return self._budget

    @property
    def iterations(self) -> int:
        """Node executions charged so far."""
        return self._iterations

    @property
    def tokens(self) -> int:
        """Tokens charged so far (may exceed the ceiling by the one call that crossed it)."""
        return self._tokens

    @property
    def cost_usd(self) -> float:
        """Sum of the costs providers reported; unpriced calls add nothing here."""
        return self._cost_usd

    @property
    def unpriced_calls(self) -> int:
        """Charges that came without a cost, so ``cost_usd`` understates the spend."""
        return self._unpriced_calls

    def charge_iteration(self, node: str) -> int:
        """Count one execution of ``node``; refuse (without counting) one past max_iterations."""
        limit = self._budget.max_iterations
        with self._lock:
            if limit is not None and self._iterations >= limit:
                raise BudgetExceededError("iterations", limit, self._iterations, node)
            self._iterations += 1
            return self._iterations

    def charge_tokens(self, tokens: int, cost_usd: float | None = None, *, node: str | None = None) -> int:
        """Add one call's usage, then raise if it crossed max_tokens or max_cost_usd.

        The usage is recorded before the check, so the overspend is bounded by the single call
        that crossed the ceiling and the meter still shows what was really spent. Under a dollar
        ceiling, a call without a price raises ``UnpricedCallError`` (see the module docstring).
        """
        tokens = _count("charged tokens", tokens)
        cost = None if cost_usd is None else _cost("charged cost_usd", cost_usd)
        limit = self._budget.max_tokens
        with self._lock:
            self._tokens += tokens
            if cost is None:
                self._unpriced_calls += 1
            else:
                self._cost_usd += cost
            total, spent, unpriced = self._tokens, self._cost_usd, self._unpriced_calls
        if limit is not None and total > limit:
            raise BudgetExceededError("tokens", limit, total, node)
        dollars = self._budget.max_cost_usd
        if dollars is not None and cost is None:
            raise UnpricedCallError(dollars, spent, unpriced, node)
        if dollars is not None and spent > dollars:
            raise BudgetExceededError("cost_usd", dollars, spent, node)
        return total

    def check_call_allowed(self, *, node: str | None = None) -> None:
        """Raise before a model call once the run is at or over its token or dollar ceiling.

        Under a dollar ceiling a run that already made an unpriced call may make no more.
        """
        tokens, dollars = self._budget.max_tokens, self._budget.max_cost_usd
        with self._lock:
            used, spent, unpriced = self._tokens, self._cost_usd, self._unpriced_calls
        if tokens is not None and used >= tokens:
            raise BudgetExceededError("tokens", tokens, used, node)
        if dollars is not None and unpriced:
            raise UnpricedCallError(dollars, spent, unpriced, node)
        if dollars is not None and spent >= dollars:
            raise BudgetExceededError("cost_usd", dollars, spent, node)

    def seconds_left(self) -> float | None:
        """Seconds until max_seconds (clamped like ``effective_seconds``), never below 0."""
        allowed = self._budget.effective_seconds
        if allowed is None:
            return None
        return max(0.0, allowed - (monotonic() - self.started_at))

    def remaining(self) -> Remaining:
        """What is left per consumable dimension (iterations, tokens, seconds, cost_usd).

        None means unlimited. Under a dollar ceiling, an unpriced call leaves ``cost_usd`` at 0:
        what the run spent is unknown, so nothing more may be counted on.
        """
        budget = self._budget
        with self._lock:
            iterations, tokens = self._iterations, self._tokens
            spent, unpriced = self._cost_usd, self._unpriced_calls
        dollars = budget.max_cost_usd
        return {
            "iterations": None
            if budget.max_iterations is None
            else max(0, budget.max_iterations - iterations),
            "tokens": None if budget.max_tokens is None else max(0, budget.max_tokens - tokens),
            "seconds": self.seconds_left(),
            "cost_usd": None if dollars is None else 0.0 if unpriced else max(0.0, dollars - spent),
        }

    def exhausted(self) -> list[str]:
        """The dimensions with nothing left, in ``remaining()`` order (empty: the run may go on)."""
        remaining = self.remaining().items()
        return [name for name, left in remaining if isinstance(left, int | float) and left <= 0]
