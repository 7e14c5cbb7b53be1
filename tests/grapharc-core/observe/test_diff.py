"""diff: path, state, tokens and outcome of two runs; identical runs have no differences."""

from __future__ import annotations

import pytest

from grapharc.observe.diff import diff
from grapharc.observe.errors import UnknownRunError


def run(builder, run_id, nodes, tokens=1, status="completed", final=None):
    builder.run_start(run_id)
    for step, node in enumerate(nodes, start=1):
        builder.node(run_id, node, step, tokens=tokens, delta={"last": node, **(final or {})})
    builder.run_end(run_id, status=status)


def test_runs_that_did_the_same_work_are_identical_despite_timings(builder):
    run(builder, "a", ["x", "y"])
    builder.clock += 100
    run(builder, "b", ["x", "y"])
    result = diff(builder.write(), "a", "b")
    assert result.identical
    assert result.to_document()["node_path"] == {"same": True, "length": {"a": 2, "b": 2},
                                                 "first_divergence": None}


def test_a_different_path_is_located_at_its_first_divergence(builder):
    run(builder, "a", ["x", "y", "z"])
    run(builder, "b", ["x", "q", "z"])
    section = diff(builder.write(), "a", "b").path_diff
    assert section["same"] is False and section["first_divergence"] == 1
    assert section["a"] == ["x", "y", "z"] and section["b"] == ["x", "q", "z"]


def test_a_shorter_path_diverges_where_it_stops(builder):
    run(builder, "a", ["x", "y"])
    run(builder, "b", ["x"])
    assert diff(builder.write(), "a", "b").path_diff["first_divergence"] == 1


def test_state_tokens_and_outcome_differences_are_each_reported(builder):
    run(builder, "a", ["x"], tokens=1, final={"answer": 42, "only_a": True})
    run(builder, "b", ["x"], tokens=5, status="error", final={"answer": 41})
    result = diff(builder.write(), "a", "b")
    document = result.to_document()
    assert not result.identical and document["node_path"]["same"]
    assert document["state"]["changed"] == {"answer": {"a": 42, "b": 41}}
    assert document["state"]["only_a"] == {"only_a": True}
    assert document["tokens"]["nodes"] == {"x": {"a": 1, "b": 5}}
    assert document["outcome"]["a"]["status"] == "completed" and document["outcome"]["b"]["status"] == "error"


def test_reducers_apply_to_both_runs(builder):
    builder.run_start("a").node("a", "w", 1, delta={"xs": [1]}).node("a", "w", 2, delta={"xs": [2]})
    builder.run_start("b").node("b", "w", 1, delta={"xs": [3]}).node("b", "w", 2, delta={"xs": [2]})
    path = builder.write()
    assert diff(path, "a", "b").state_diff["same"]
    assert diff(path, "a", "b", reducers={"xs": "append"}).state_diff["changed"] == \
        {"xs": {"a": [1, 2], "b": [3, 2]}}


def test_either_run_missing_is_reported_by_id(builder):
    run(builder, "a", ["x"])
    with pytest.raises(UnknownRunError, match="'b'"):
        diff(builder.write(), "a", "b")
