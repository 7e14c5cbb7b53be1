"""``compile(budget_scope="thread")``: the budget bounds a checkpointed thread, not each attempt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from grapharc import Budget, GraphARC, GraphARCState
from grapharc.runtime.budget import BudgetExceededError
from grapharc.runtime.errors import GraphBuildError
from grapharc.runtime.graph import END, START
from grapharc.testing import ScriptedChatModel

CONFIG = {"configurable": {"thread_id": "t"}}


class State(GraphARCState):
    log: list[str] = []  # noqa: RUF012 - pydantic copies field defaults


def spending(trace: Path | None = None) -> GraphARC:
    """draft -> send, each a model call of 90 tokens, under 100 tokens; held before send."""
    model = ScriptedChatModel(responses=["word " * 70], cycle=True)

    def call(name: str):
        def node(state: State) -> dict:
            model.invoke(f"{name} it")
            return {"log": [*state.log, name]}
        return node

    g = GraphARC(State, name="spend", budget=Budget(max_tokens=100), trace=trace)
    g.add_node("draft", call("draft"), writes={"log"})
    g.add_node("send", call("send"), writes={"log"})
    g.add_edge(START, "draft")
    g.add_edge("draft", "send")
    g.add_edge("send", END)
    return g


def test_a_per_run_budget_lets_each_attempt_spend_the_whole_allowance_again() -> None:
    compiled = spending().compile(checkpointer=InMemorySaver(), interrupt_before=["send"])
    compiled.invoke({}, CONFIG)
    assert compiled.invoke(None, CONFIG)["log"] == ["draft", "send"]


def test_a_thread_budget_carries_the_spend_of_earlier_attempts(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    compiled = spending(trace).compile(checkpointer=InMemorySaver(), interrupt_before=["send"],
                                       budget_scope="thread")
    compiled.invoke({}, CONFIG)
    first = compiled.last_run

    with pytest.raises(BudgetExceededError) as raised:
        compiled.invoke(None, CONFIG)

    assert (raised.value.dimension, raised.value.used) == ("tokens", 2 * first.tokens)
    second = compiled.last_run
    assert (first.tokens, second.tokens) == (90, 90)  # each run reports only its own spend
    run_ends = [e for e in map(json.loads, trace.read_text().splitlines()) if e["phase"] == "run_end"]
    assert [e["tokens"] for e in run_ends] == [90, 90]


def test_an_update_between_attempts_keeps_the_threads_spend() -> None:
    compiled = spending().compile(checkpointer=InMemorySaver(), interrupt_before=["send"],
                                  budget_scope="thread")
    compiled.invoke({}, CONFIG)
    compiled.update_state(CONFIG, {"log": ["draft", "edited"]}, as_node="draft")
    with pytest.raises(BudgetExceededError):
        compiled.invoke(None, CONFIG)


def test_every_checkpoint_of_a_thread_metered_run_records_the_spend_so_far() -> None:
    saver = InMemorySaver()
    compiled = spending().compile(checkpointer=saver, interrupt_before=["send"], budget_scope="thread")
    compiled.invoke({}, CONFIG)
    latest = saver.get_tuple(CONFIG)
    assert latest.metadata["grapharc_spent_tokens"] == 90
    assert latest.metadata["grapharc_spent_iterations"] == 1


def test_an_unknown_budget_scope_is_refused_when_compiling() -> None:
    with pytest.raises(GraphBuildError, match="budget_scope"):
        spending().compile(budget_scope="session")  # type: ignore[arg-type]
