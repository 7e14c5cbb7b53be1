"""Write permissions and typed writes: every write is checked before it lands."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from pydantic import AfterValidator, ConfigDict, Field, ValidationError, field_validator, model_validator

from grapharc import GraphARC, GraphARCState
from grapharc.runtime.errors import NodeOutputError, StateTypeError, WritePermissionError
from grapharc.runtime.graph import END, START

pytestmark = pytest.mark.smoke


class State(GraphARCState):
    count: int = 0
    label: str = ""
    positive: Annotated[int, Field(gt=0)] = 1
    shout: Annotated[str, AfterValidator(str.upper)] = ""
    notes: Annotated[list[str], operator.add] = Field(default_factory=list)


class Validated(GraphARCState):
    slug: str = "start"
    low: int = 0
    high: int = 10

    @field_validator("slug")
    @classmethod
    def lower_case_only(cls, value: str) -> str:
        if value != value.lower():
            raise ValueError("slug must be lower case")
        return value

    @model_validator(mode="after")
    def ordered(self) -> Validated:
        if self.low > self.high:
            raise ValueError("low must not exceed high")
        return self


def chain(state: type, *nodes: tuple[str, Any, set[str]]) -> Any:
    """START -> each node in turn -> END, compiled."""
    g = GraphARC(state)
    previous = START
    for name, fn, writes in nodes:
        g.add_node(name, fn, writes=writes)
        g.add_edge(previous, name)
        previous = name
    g.add_edge(previous, END)
    return g.compile()


def test_an_undeclared_write_raises_write_permission_error_naming_node_field_and_allowlist() -> None:
    graph = chain(State, ("counter", lambda s: {"count": 1, "label": "sneaky"}, {"count"}))

    with pytest.raises(WritePermissionError) as raised:
        graph.invoke({})

    error = raised.value
    assert (error.node, error.field, error.declared) == ("counter", "label", {"count"})
    assert "'counter'" in str(error) and "'label'" in str(error)


def test_a_node_declaring_no_writes_may_not_write_anything() -> None:
    graph = chain(State, ("quiet", lambda s: {"count": 1}, set()))

    with pytest.raises(WritePermissionError, match="declared writes=\\{\\(none\\)\\}"):
        graph.invoke({})


def test_a_write_of_the_wrong_type_raises_state_type_error_naming_node_field_type_and_value() -> None:
    graph = chain(State, ("counter", lambda s: {"count": "many"}, {"count"}))

    with pytest.raises(StateTypeError) as raised:
        graph.invoke({})

    error = raised.value
    assert (error.node, error.field, error.expected, error.value) == ("counter", "count", "int", "many")
    assert "expected int, got str 'many'" in str(error)


def test_a_bad_write_by_the_last_node_before_end_never_reaches_the_result() -> None:
    graph = chain(
        State,
        ("first", lambda s: {"count": 1}, {"count"}),
        ("last", lambda s: {"count": [1, 2]}, {"count"}),
    )

    with pytest.raises(StateTypeError, match="node 'last' wrote 'count'"):
        graph.invoke({})


def test_the_coerced_value_is_what_lands_in_state() -> None:
    graph = chain(State, ("counter", lambda s: {"count": "7"}, {"count"}))

    result = graph.invoke({})

    assert result["count"] == 7 and isinstance(result["count"], int)


def test_constraints_carried_in_the_annotation_bite_on_write() -> None:
    graph = chain(State, ("zero", lambda s: {"positive": 0}, {"positive"}))

    with pytest.raises(StateTypeError, match="greater than 0"):
        graph.invoke({})


def test_an_annotated_validator_transforms_the_value_that_lands() -> None:
    graph = chain(State, ("shouter", lambda s: {"shout": "hey"}, {"shout"}))

    assert graph.invoke({})["shout"] == "HEY"


class Tidy(GraphARCState):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, allow_inf_nan=False)

    name: str = ""
    ratio: float = 0.0


def test_the_models_string_options_apply_to_a_plain_string_write() -> None:
    graph = chain(Tidy, ("namer", lambda s: {"name": "  ada  "}, {"name"}))

    assert graph.invoke({})["name"] == "ada"


def test_a_model_that_refuses_nan_refuses_a_nan_write() -> None:
    graph = chain(Tidy, ("divider", lambda s: {"ratio": float("nan")}, {"ratio"}))

    with pytest.raises(StateTypeError, match="node 'divider' wrote 'ratio'"):
        graph.invoke({})


def test_a_field_validator_runs_on_a_write_by_the_last_node_before_end() -> None:
    graph = chain(Validated, ("namer", lambda s: {"slug": "NOT-LOWER"}, {"slug"}))

    with pytest.raises(StateTypeError) as raised:
        graph.invoke({})

    assert raised.value.node == "namer" and raised.value.field == "slug"
    assert "lower case" in str(raised.value)


def test_constructing_the_model_with_that_value_raises_too_so_the_checks_agree() -> None:
    with pytest.raises(ValidationError):
        Validated(slug="NOT-LOWER")


def test_a_model_validator_runs_on_the_state_as_it_would_be_after_the_write() -> None:
    graph = chain(Validated, ("bounds", lambda s: {"low": 11}, {"low"}))

    with pytest.raises(StateTypeError, match="low must not exceed high"):
        graph.invoke({})


def test_writes_that_satisfy_the_model_validators_together_land() -> None:
    graph = chain(Validated, ("bounds", lambda s: {"low": 11, "high": 20}, {"low", "high"}))

    result = graph.invoke({})

    assert (result["low"], result["high"]) == (11, 20)


def test_a_reducer_field_update_is_type_checked_and_then_reduced() -> None:
    graph = chain(
        State,
        ("one", lambda s: {"notes": ["a"]}, {"notes"}),
        ("two", lambda s: {"notes": ["b"]}, {"notes"}),
    )
    assert graph.invoke({})["notes"] == ["a", "b"]

    bad = chain(State, ("one", lambda s: {"notes": [1, {"x": 2}]}, {"notes"}))
    with pytest.raises(StateTypeError, match="node 'one' wrote 'notes'"):
        bad.invoke({})


def test_a_node_returning_something_other_than_a_dict_raises_node_output_error() -> None:
    graph = chain(State, ("odd", lambda s: ["count", 1], {"count"}))

    with pytest.raises(NodeOutputError, match="node 'odd' returned list"):
        graph.invoke({})


def test_a_node_returning_none_writes_nothing() -> None:
    graph = chain(State, ("noop", lambda s: None, {"count"}))

    assert graph.invoke({"count": 3})["count"] == 3


def test_state_models_forbid_fields_they_do_not_declare() -> None:
    with pytest.raises(ValidationError):
        State(cuont=1)  # type: ignore[call-arg]


def test_run_input_is_type_checked_and_coerced() -> None:
    graph = chain(State, ("noop", lambda s: None, set()))

    assert graph.invoke({"count": "4"})["count"] == 4
    with pytest.raises(StateTypeError, match="run input wrote 'count'"):
        graph.invoke({"count": "four"})
