"""Money as a budget dimension: max_cost_usd is validated, charged per call, and fails closed."""

from __future__ import annotations

import math
import pickle
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from grapharc import Budget, GraphARC, GraphARCState
from grapharc.models.scripted import ScriptedChatModel
from grapharc.runtime.budget import (
    BudgetExceededError,
    BudgetMeter,
    InvalidBudgetError,
    UnpricedCallError,
)
from grapharc.runtime.graph import END, START
from grapharc.trace.reader import read_events


class State(GraphARCState):
    replies: int = 0


@pytest.mark.parametrize("value", [0, 0.0, -0.5, math.nan, math.inf, True, "1"])
def test_a_dollar_ceiling_that_is_not_finite_and_positive_is_refused_naming_the_field(value):
    with pytest.raises(InvalidBudgetError) as caught:
        Budget(max_cost_usd=value)
    assert caught.value.field == "Budget.max_cost_usd"


def test_a_whole_number_of_dollars_is_kept_as_a_float():
    assert Budget(max_cost_usd=2).max_cost_usd == 2.0


def test_the_call_that_crosses_the_dollar_ceiling_is_recorded_then_raises():
    meter = BudgetMeter(Budget(max_cost_usd=0.5))
    meter.charge_tokens(10, 0.3, node="a")
    meter.charge_tokens(10, 0.2, node="a")  # exactly at the ceiling is allowed
    with pytest.raises(BudgetExceededError) as caught:
        meter.charge_tokens(10, 0.25, node="b")
    error = caught.value
    assert (error.dimension, error.limit, error.used, error.node) == ("cost_usd", 0.5, 0.75, "b")
    assert "$0.75 used of a limit of $0.5" in str(error) and "max_cost_usd" in error.hint
    assert meter.cost_usd == pytest.approx(0.75)


def test_no_call_may_start_once_the_dollars_are_spent():
    meter = BudgetMeter(Budget(max_cost_usd=0.5))
    meter.charge_tokens(1, 0.49)
    meter.check_call_allowed(node="n")
    meter.charge_tokens(1, 0.01)
    with pytest.raises(BudgetExceededError) as caught:
        meter.check_call_allowed(node="n")
    assert (caught.value.dimension, caught.value.used) == ("cost_usd", pytest.approx(0.5))


def test_remaining_reports_the_dollars_left_never_below_zero():
    meter = BudgetMeter(Budget(max_cost_usd=1.0), cost_usd=0.25)
    assert meter.remaining()["cost_usd"] == pytest.approx(0.75)
    with pytest.raises(BudgetExceededError):
        meter.charge_tokens(0, 2.0)
    assert meter.remaining()["cost_usd"] == 0.0
    assert meter.exhausted() == ["cost_usd"]


def test_an_unpriced_call_under_a_dollar_ceiling_ends_the_run_because_the_spend_is_unknown():
    meter = BudgetMeter(Budget(max_cost_usd=1.0))
    meter.charge_tokens(5, 0.2)
    with pytest.raises(UnpricedCallError) as caught:
        meter.charge_tokens(5, None, node="ask")
    error = caught.value
    assert isinstance(error, BudgetExceededError) and error.dimension == "cost_usd"
    assert "reported no price" in str(error) and "price_per_million" in error.hint
    assert meter.unpriced_calls == 1 and meter.remaining()["cost_usd"] == 0.0
    with pytest.raises(UnpricedCallError):
        meter.check_call_allowed(node="ask")


def test_without_a_dollar_ceiling_unpriced_calls_are_only_counted():
    meter = BudgetMeter(Budget(max_tokens=100))
    meter.charge_tokens(5, None)
    meter.check_call_allowed()
    assert (meter.unpriced_calls, meter.remaining()["cost_usd"]) == (1, None)


def test_a_dollar_error_survives_pickling():
    for error in (BudgetExceededError("cost_usd", 0.5, 0.75, "n"), UnpricedCallError(0.5, 0.1, 2, "n")):
        copy = pickle.loads(pickle.dumps(error))
        assert (type(copy), str(copy), copy.dimension, copy.used) == \
            (type(error), str(error), "cost_usd", error.used)


def asking(model: ScriptedChatModel, budget: Budget, trace: Path):
    def ask(state: State) -> dict:
        for _ in range(5):
            model.invoke([HumanMessage("q")])
        return {"replies": 5}

    graph = GraphARC(State, name="ask", budget=budget, trace=trace)
    graph.add_node("ask", ask, writes={"replies"})
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    return graph.compile()


def test_a_runs_dollar_ceiling_stops_the_node_at_the_call_that_crossed_it(tmp_path):
    model = ScriptedChatModel(cost_usd=0.2)
    trace = tmp_path / "t.jsonl"
    with pytest.raises(BudgetExceededError) as caught:
        asking(model, Budget(max_cost_usd=0.5), trace).invoke({})
    assert caught.value.dimension == "cost_usd" and len(model.calls) == 3
    run_end = list(read_events(trace))[-1]
    assert (run_end["stop_reason"], run_end["cost_usd"]) == ("cost_usd", pytest.approx(0.6))


def test_an_unpriced_model_under_a_dollar_ceiling_makes_one_call_and_no_more(tmp_path):
    model = ScriptedChatModel(cost_usd=None)  # a provider that reports no price
    with pytest.raises(UnpricedCallError):
        asking(model, Budget(max_cost_usd=0.5), tmp_path / "t.jsonl").invoke({})
    assert len(model.calls) == 1
