"""What a graph declares a run's caller may set is checked where it is declared: pydantic models, and
no configurable key that names the thread or checkpoint or is GraphARC's own."""

from __future__ import annotations

import pytest
from pydantic import create_model

from grapharc.runtime.errors import GraphBuildError
from grapharc.runtime.graph import GraphARC
from grapharc.runtime.state import GraphARCState


class _State(GraphARCState):
    answer: str = ""


@pytest.mark.parametrize("key", ["thread_id", "checkpoint_ns", "checkpoint_id", "grapharc_budget"])
def test_a_config_schema_may_not_declare_a_reserved_key(key: str) -> None:
    with pytest.raises(GraphBuildError, match=f"reserved configurable keys: {key}"):
        GraphARC(_State, config_schema=create_model("Taken", **{key: (str, "")}))


@pytest.mark.parametrize("argument", ["config_schema", "context_schema"])
def test_a_schema_must_be_a_pydantic_model(argument: str) -> None:
    with pytest.raises(GraphBuildError, match=f"{argument} must be a pydantic model class"):
        GraphARC(_State, **{argument: dict})
