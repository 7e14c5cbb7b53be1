"""An integer the checkpoint cannot store (msgpack: -2**63 .. 2**64-1) is refused at the write."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.sqlite import SqliteSaver
from pydantic import BaseModel, Field

from grapharc import GraphARC, GraphARCState
from grapharc.runtime.errors import StateTypeError
from grapharc.runtime.graph import END, START
from grapharc.runtime.state import CHECKPOINT_INT_MAX, CHECKPOINT_INT_MIN


class Reading(BaseModel):
    value: int = 0


@dataclasses.dataclass
class Sample:
    value: int


class State(GraphARCState):
    n: int = 0
    items: list[Any] = Field(default_factory=list)
    readings: dict[str, Reading] = Field(default_factory=dict)
    anything: Any = None


def one_node(checkpointer: Any, write: dict[str, Any]) -> Any:
    graph = GraphARC(State)
    graph.add_node("count", lambda state: write, writes=set(write))
    graph.add_edge(START, "count")
    graph.add_edge("count", END)
    return graph.compile(checkpointer=checkpointer)


@pytest.fixture
def saver(tmp_path: Path) -> SqliteSaver:
    return SqliteSaver(sqlite3.connect(str(tmp_path / "checkpoints.db"), check_same_thread=False))


def run(saver: SqliteSaver, write: dict[str, Any], thread: str = "t") -> dict[str, Any]:
    return one_node(saver, write).invoke({}, {"configurable": {"thread_id": thread}})


def test_an_int_wider_than_64_bits_is_refused_naming_node_and_field(saver):
    with pytest.raises(StateTypeError) as raised:
        run(saver, {"n": 2**64})

    error = raised.value
    assert (error.node, error.field) == ("count", "n")
    assert "node 'count' wrote 'n'" in str(error) and "outside the integers a checkpoint" in str(error)


@pytest.mark.parametrize(("write", "where"), [
    ({"items": [1, [2, 2**64]]}, "items[1][1]"),
    ({"readings": {"cpu": Reading(value=-(2**63) - 1)}}, "readings['cpu'].value"),
    ({"anything": {2**70: "key"}}, "anything key 1180591620717411303424"),
    ({"anything": Sample(value=2**64)}, "anything.value"),
    ({"anything": frozenset({2**65})}, "anything member"),
])
def test_a_wide_int_inside_lists_dicts_models_and_dataclasses_is_refused_naming_where(saver, write,
                                                                                    where):
    with pytest.raises(StateTypeError, match=r"\(" + where.replace("[", r"\[") + " is outside"):
        run(saver, write)


def test_the_widest_ints_a_checkpoint_holds_are_written_and_read_back(saver):
    graph = one_node(saver, {"n": CHECKPOINT_INT_MAX, "items": [CHECKPOINT_INT_MIN]})
    config = {"configurable": {"thread_id": "edges"}}

    graph.invoke({}, config)

    stored = graph.get_state(config).values
    assert (stored["n"], stored["items"]) == (2**64 - 1, [-(2**63)])


def test_run_input_holding_a_wide_int_is_refused_before_anything_runs(saver):
    with pytest.raises(StateTypeError, match="run input wrote 'n'"):
        one_node(saver, {"n": 1}).invoke({"n": -(2**64)}, {"configurable": {"thread_id": "in"}})


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=-(2**80), max_value=2**80))
def test_any_int_is_stored_and_read_back_exactly_or_refused_with_a_state_type_error(tmp_path_factory,
                                                                                    number):
    folder = tmp_path_factory.mktemp("ints")
    saver = SqliteSaver(sqlite3.connect(str(folder / "c.db"), check_same_thread=False))
    graph = one_node(saver, {"items": [{"deep": number}]})
    config = {"configurable": {"thread_id": "t"}}
    try:
        graph.invoke({}, config)
    except StateTypeError:
        assert not CHECKPOINT_INT_MIN <= number <= CHECKPOINT_INT_MAX
        return
    assert graph.get_state(config).values["items"] == [{"deep": number}]
