"""The builder and compiled graph through the names and spellings the seeds show."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel, Field

from grapharc import GraphARC, GraphARCState
from grapharc.runtime.errors import (
    GraphBuildError,
    UnknownFieldError,
    UnknownNodeError,
    WritePermissionError,
)
from grapharc.runtime.graph import END, START

pytestmark = pytest.mark.smoke


class State(GraphARCState):
    question: str
    answer: str = ""
    notes: Annotated[list[str], operator.add] = Field(default_factory=list)


def answer(state: State) -> dict:
    return {"answer": f"42 (asked: {state.question})"}


def test_the_readme_example_runs_and_returns_the_written_answer() -> None:
    from grapharc import Budget

    g = GraphARC(State, name="demo", budget=Budget(max_iterations=10))
    g.add_node("answer", answer, writes={"answer"})
    g.add_edge(START, "answer")
    g.add_edge("answer", END)
    compiled = g.compile()

    result = compiled.invoke({"question": "meaning of life"})

    assert result["answer"] == "42 (asked: meaning of life)"
    assert compiled.name == "demo"
    assert compiled.inner.get_graph().nodes.keys() >= {"answer"}


def test_the_seed_quick_start_spelling_runs_with_string_start_and_end() -> None:
    from grapharc.runtime import StateGraph

    class MyState(BaseModel):
        messages: list[str]
        result: str = ""

    graph = StateGraph(MyState)
    graph.add_node("process", lambda state: {"result": "done"})
    graph.add_edge("START", "process")
    graph.add_edge("process", "END")
    compiled = graph.compile()

    assert compiled.invoke({"messages": ["hello"]}) == {"messages": ["hello"], "result": "done"}


def test_grapharc_exports_the_builder_the_state_base_and_the_budget_lazily() -> None:
    import grapharc
    from grapharc.runtime.budget import Budget
    from grapharc.runtime.graph import GraphARC as GraphFromModule
    from grapharc.runtime.state import GraphARCState as StateFromModule

    assert grapharc.GraphARC is GraphFromModule
    assert grapharc.GraphARCState is StateFromModule
    assert grapharc.Budget is Budget
    assert START == "__start__" and END == "__end__"


def test_a_declared_write_to_a_field_the_state_lacks_fails_at_add_node() -> None:
    g = GraphARC(State)

    with pytest.raises(UnknownFieldError) as raised:
        g.add_node("answer", answer, writes={"answr"})

    assert raised.value.field == "answr"
    assert "add_node('answer')" in str(raised.value)


def test_an_edge_to_a_node_that_does_not_exist_is_refused_where_it_is_declared() -> None:
    g = GraphARC(State)
    g.add_node("answer", answer, writes={"answer"})

    with pytest.raises(UnknownNodeError) as raised:
        g.add_edge("answer", "summarise")

    assert raised.value.node == "summarise"


@pytest.mark.parametrize("name", ["START", "END", "a|b", "a:b"])
def test_reserved_node_names_are_refused(name: str) -> None:
    with pytest.raises(GraphBuildError):
        GraphARC(State).add_node(name, answer)


def test_a_second_node_with_the_same_name_is_refused() -> None:
    g = GraphARC(State).add_node("answer", answer, writes={"answer"})

    with pytest.raises(GraphBuildError, match="already has a node 'answer'"):
        g.add_node("answer", answer, writes={"answer"})


def test_the_state_must_be_a_pydantic_model() -> None:
    with pytest.raises(GraphBuildError, match="pydantic model"):
        GraphARC(dict)  # type: ignore[arg-type]


def test_a_node_may_take_the_config_and_be_added_by_function_name() -> None:
    seen: list[str] = []

    def note(state: State, config: dict) -> dict:
        seen.append(config["metadata"]["langgraph_node"])
        return {"notes": ["noted"]}

    g = GraphARC(State)
    g.add_node(note, writes={"notes"})
    g.add_edge(START, "note")
    g.add_edge("note", END)

    assert g.compile().invoke({"question": "q"})["notes"] == ["noted"]
    assert seen == ["note"]


def test_a_join_edge_waits_for_every_source() -> None:
    g = GraphARC(State)
    g.add_node("left", lambda s: {"notes": ["left"]}, writes={"notes"})
    g.add_node("right", lambda s: {"notes": ["right"]}, writes={"notes"})
    g.add_node("both", lambda s: {"answer": ",".join(sorted(s.notes))}, writes={"answer"})
    g.add_edge(START, "left")
    g.add_edge(START, "right")
    g.add_edge(["left", "right"], "both")
    g.add_edge("both", END)

    assert g.compile().invoke({"question": "q"})["answer"] == "left,right"


def test_state_inspection_and_history_come_from_the_checkpointer() -> None:
    g = GraphARC(State)
    g.add_node("answer", answer, writes={"answer"})
    g.add_edge(START, "answer")
    g.add_edge("answer", END)
    compiled = g.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}

    compiled.invoke({"question": "q"}, config)

    assert compiled.get_state(config).values["answer"] == "42 (asked: q)"
    assert len(list(compiled.get_state_history(config))) >= 3


def test_a_checkpointed_graph_refuses_a_run_without_a_thread_id() -> None:
    g = GraphARC(State)
    g.add_node("answer", answer, writes={"answer"})
    g.add_edge(START, "answer")
    compiled = g.compile(checkpointer=InMemorySaver())

    with pytest.raises(Exception, match="thread_id"):
        compiled.invoke({"question": "q"})


def test_run_input_with_an_unknown_field_is_refused_before_anything_runs() -> None:
    ran: list[str] = []
    g = GraphARC(State)
    g.add_node("answer", lambda s: ran.append("x") or {}, writes=set())
    g.add_edge(START, "answer")

    with pytest.raises(UnknownFieldError, match="run input"):
        g.compile().invoke({"question": "q", "qestion": "typo"})
    assert ran == []


def test_a_langchain_runnable_can_be_a_node_with_its_writes_checked() -> None:
    g = GraphARC(State)
    g.add_node("lambda", RunnableLambda(lambda s: {"answer": f"re: {s.question}"}), writes={"answer"})
    g.add_node("rogue", RunnableLambda(lambda s: {"question": "changed"}), writes={"answer"})
    g.add_edge(START, "lambda")
    g.add_edge("lambda", "rogue")

    with pytest.raises(WritePermissionError, match="'rogue' wrote 'question'"):
        g.compile().invoke({"question": "q"})
