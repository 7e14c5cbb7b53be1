"""A turn may be given a budget: the thread runs under the stricter of it and the graph's, in
every dimension, so a caller can tighten a graph's budget for a turn but never loosen it."""

from __future__ import annotations

import asyncio

import pytest

from grapharc.runtime.budget import Budget, BudgetExceededError
from grapharc.session import SessionManager


def test_a_turn_budget_stops_the_thread_where_it_says(manager: SessionManager) -> None:
    manager.create("chain", thread_id="tight")
    with pytest.raises(BudgetExceededError, match="iterations budget exceeded"):
        manager.run("tight", {}, budget=Budget(max_iterations=2))
    assert manager.get("tight").status == "failed"
    assert manager.values("tight")["log"] == ["n1", "n2"]


def test_without_a_turn_budget_the_same_thread_runs_to_its_end(manager: SessionManager) -> None:
    manager.create("chain", thread_id="free")
    assert manager.run("free", {}).status == "completed"
    assert manager.values("free")["log"] == ["n1", "n2", "n3", "n4"]


def test_a_looser_turn_budget_does_not_lift_the_graphs(manager: SessionManager) -> None:
    manager.create("spender-ungated", thread_id="loose")

    async def scenario() -> None:
        try:
            with pytest.raises(BudgetExceededError, match="tokens budget exceeded"):
                await manager.arun("loose", {}, budget=Budget(max_tokens=1_000_000))
        finally:
            await manager.aclose()

    asyncio.run(scenario())
    assert manager.get("loose").status == "failed"


def test_a_recovery_runs_under_the_budget_it_is_given(manager: SessionManager) -> None:
    manager.create("chain", thread_id="taken-over")
    with pytest.raises(BudgetExceededError):
        manager.run("taken-over", {}, budget=Budget(max_iterations=1))
    assert manager.get("taken-over").status == "failed"
    with pytest.raises(BudgetExceededError, match="iterations budget exceeded"):
        manager.recover("taken-over", budget=Budget(max_iterations=2))
    assert manager.values("taken-over")["log"] == ["n1", "n2"]

    async def scenario() -> None:
        try:
            await manager.arecover("taken-over", budget=Budget(max_iterations=10))
        finally:
            await manager.aclose()

    asyncio.run(scenario())
    assert manager.get("taken-over").status == "completed"
    assert manager.values("taken-over")["log"] == ["n1", "n2", "n3", "n4"]
