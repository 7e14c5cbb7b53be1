"""Budget validation and the meter's accounting: what is refused, when, and what it records."""

from __future__ import annotations

import math
import pickle
import threading

import pytest

from grapharc.errors import GraphARCError
from grapharc.runtime.budget import (
    Budget,
    BudgetExceededError,
    BudgetMeter,
    InvalidBudgetError,
)
from grapharc.runtime.deadline import MAX_DEADLINE_SECONDS


@pytest.mark.parametrize("field", ["max_iterations", "max_tokens", "max_concurrency"])
@pytest.mark.parametrize("value", [0, -3, True, False, 1.5, 2.0, math.nan, "5"])
def test_an_integer_ceiling_that_is_not_a_positive_int_is_refused_naming_the_field(
    field: str, value: object
) -> None:
    with pytest.raises(InvalidBudgetError) as caught:
        Budget(**{field: value})
    assert caught.value.field == f"Budget.{field}"
    assert field in str(caught.value)
    assert repr(value) in str(caught.value)
    assert isinstance(caught.value, GraphARCError)


@pytest.mark.parametrize("value", [0, 0.0, -1.0, math.nan, True, "30", -math.inf])
def test_max_seconds_that_is_not_a_positive_number_is_refused(value: object) -> None:
    with pytest.raises(InvalidBudgetError, match="max_seconds"):
        Budget(max_seconds=value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [math.inf, 1e10, MAX_DEADLINE_SECONDS * 2])
def test_absurd_max_seconds_is_accepted_and_clamped_for_timers(value: float) -> None:
    budget = Budget(max_seconds=value)
    assert budget.max_seconds == value
    assert budget.effective_seconds == MAX_DEADLINE_SECONDS


def test_unlimited_is_the_default_in_every_dimension() -> None:
    budget = Budget()
    meter = BudgetMeter(budget)
    for _ in range(1000):
        meter.charge_iteration("n")
    meter.charge_tokens(10**9)
    meter.check_call_allowed()
    assert budget.effective_seconds is None
    assert meter.remaining() == {"iterations": None, "tokens": None, "seconds": None,
                                 "cost_usd": None}


def test_an_iteration_past_the_ceiling_is_refused_without_being_counted() -> None:
    meter = BudgetMeter(Budget(max_iterations=2))
    assert meter.charge_iteration("plan") == 1
    assert meter.charge_iteration("act") == 2
    with pytest.raises(BudgetExceededError) as caught:
        meter.charge_iteration("verify")
    error = caught.value
    assert (error.dimension, error.limit, error.used, error.node) == ("iterations", 2, 2, "verify")
    assert "verify" in str(error) and "iterations" in str(error)
    assert meter.iterations == 2


def test_a_call_that_crosses_the_token_ceiling_is_recorded_and_then_raises() -> None:
    meter = BudgetMeter(Budget(max_tokens=100))
    assert meter.charge_tokens(60, 0.01, node="a") == 60
    assert meter.charge_tokens(40, node="a") == 100  # exactly at the ceiling is allowed
    with pytest.raises(BudgetExceededError) as caught:
        meter.charge_tokens(30, 0.02, node="b")
    error = caught.value
    assert (error.dimension, error.limit, error.used, error.node) == ("tokens", 100, 130, "b")
    assert meter.tokens == 130
    assert meter.cost_usd == pytest.approx(0.03)


def test_no_call_may_start_once_the_run_is_at_its_token_ceiling() -> None:
    meter = BudgetMeter(Budget(max_tokens=50))
    meter.charge_tokens(49)
    meter.check_call_allowed(node="n")
    meter.charge_tokens(1)
    with pytest.raises(BudgetExceededError) as caught:
        meter.check_call_allowed(node="n")
    assert (caught.value.used, caught.value.node) == (50, "n")


def test_unpriced_charges_are_counted_and_priced_ones_summed() -> None:
    meter = BudgetMeter(Budget())
    meter.charge_tokens(10, 0.5)
    meter.charge_tokens(10)
    meter.charge_tokens(0)
    meter.charge_tokens(10, 0.0)
    assert meter.cost_usd == pytest.approx(0.5)
    assert meter.unpriced_calls == 2
    assert meter.tokens == 30


@pytest.mark.parametrize(
    ("tokens", "cost"), [(-1, None), (True, None), (1.5, None), (1, -0.1), (1, math.nan)]
)
def test_a_malformed_charge_is_refused(tokens: object, cost: object) -> None:
    meter = BudgetMeter(Budget())
    with pytest.raises(InvalidBudgetError):
        meter.charge_tokens(tokens, cost)  # type: ignore[arg-type]
    assert meter.tokens == 0


def test_a_meter_resumed_with_earlier_counts_enforces_against_the_total() -> None:
    meter = BudgetMeter(Budget(max_iterations=5, max_tokens=100), iterations=5, tokens=90)
    with pytest.raises(BudgetExceededError):
        meter.charge_iteration("n")
    with pytest.raises(BudgetExceededError):
        meter.charge_tokens(11)
    assert meter.remaining()["iterations"] == 0


def test_remaining_reports_what_is_left_per_dimension_never_below_zero() -> None:
    meter = BudgetMeter(Budget(max_iterations=10, max_tokens=100, max_seconds=3600))
    meter.charge_iteration("n")
    with pytest.raises(BudgetExceededError):
        meter.charge_tokens(150)
    left = meter.remaining()
    assert left["iterations"] == 9
    assert left["tokens"] == 0
    assert left["seconds"] is not None and 0 < left["seconds"] <= 3600


def test_seconds_left_is_clamped_for_an_infinite_budget() -> None:
    meter = BudgetMeter(Budget(max_seconds=math.inf))
    left = meter.seconds_left()
    assert left is not None and 0 < left <= MAX_DEADLINE_SECONDS


def test_concurrent_charges_from_many_threads_are_never_lost() -> None:
    meter = BudgetMeter(Budget())

    def work() -> None:
        for _ in range(2000):
            meter.charge_tokens(1, 0.001)
            meter.charge_iteration("w")

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert meter.tokens == 16000
    assert meter.iterations == 16000
    assert meter.cost_usd == pytest.approx(16.0)


def test_a_budget_error_survives_pickling_so_it_can_cross_a_process_boundary() -> None:
    error = pickle.loads(pickle.dumps(BudgetExceededError("tokens", 10, 12, "n")))
    assert (error.dimension, error.limit, error.used, error.node) == ("tokens", 10, 12, "n")
    assert error.hint
