"""User data into admission: non-JSON args, unknown kinds and any graph file end in the library's errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from grapharc.cli.governance_commands import add_governance_commands
from grapharc.errors import GraphARCError
from grapharc.governed import prepare_graph, resolve_config, run_graph
from grapharc.planner import ProposalError, ProposedNode, Subgraph
from grapharc.planner.graph_file import read_graph_file
from grapharc.planner.proposal import proposal_from_data

EVERY_FAILURE = {
    "nodes": [{"name": "x", "kind": "nope"}, {"name": "fix", "kind": "apply_change"},
              {"name": "a", "kind": "verify"}, {"name": "b", "kind": "verify"}],
    "edges": [{"source": "__start__", "target": "x"}, {"source": "x", "target": "fix"},
              {"source": "__start__", "target": "a"}, {"source": "__start__", "target": "b"},
              {"source": "a", "target": "ghost"}]}


@pytest.fixture(autouse=True)
def in_tmp(clean_workdir):
    return clean_workdir


@pytest.fixture
def governed(in_tmp):
    return prepare_graph(resolve_config("run", {"max_tokens": 100}, cwd=in_tmp, env={}))


@pytest.mark.parametrize("value", [{1, 2}, (1, 2), b"bytes", object(), math.nan, [math.inf],
                                   {"inner": {3: "non-string key"}}])
def test_args_that_are_not_json_are_refused_where_the_proposal_is_read(value):
    with pytest.raises(ProposalError, match=r"nodes\[0\]\.args\.x"):
        proposal_from_data({"nodes": [{"name": "n", "kind": "verify", "args": {"x": value}}]})


def test_a_proposal_built_in_python_cannot_carry_non_json_args_either():
    with pytest.raises(ValueError, match="valid JSON value"):
        Subgraph(nodes=[ProposedNode(name="n", kind="verify", args={"x": {1, 2}})])


@pytest.mark.parametrize("name", ["START", "END"])
def test_node_names_the_kernel_reserves_are_refused_in_the_proposal(name):
    with pytest.raises(ProposalError, match=f"'{name}' is reserved"):
        proposal_from_data({"nodes": [{"name": name, "kind": "verify"}]})


def test_an_unknown_kind_is_one_rejection_among_every_other(governed):
    outcome = run_graph(governed, proposal_from_data(EVERY_FAILURE), {}, graph="g", name="g")

    assert not outcome.executed
    assert outcome.verdict.checks_run == ("kinds", "edges", "budget", "depth", "acyclic")
    assert outcome.verdict.codes() == ["kind_unknown", "node_denied", "edge_unknown_node",
                                       "write_conflict"]


def test_the_cli_reports_an_unknown_kind_with_every_other_failure_and_exits_1(in_tmp):
    (in_tmp / "g.json").write_text(json.dumps(EVERY_FAILURE))
    app = typer.Typer()
    add_governance_commands(app)

    result = CliRunner().invoke(app, ["run", "g.json", "--unbounded"])

    assert result.exit_code == 1, result.output
    assert "kind_unknown at nodes[0]" in result.stdout and "node_denied at nodes[1]" in result.stdout


def test_graph_input_of_the_wrong_type_is_refused_even_by_check_only(governed):
    with pytest.raises(GraphARCError, match="'goal'"):
        run_graph(governed, proposal_from_data({"nodes": [{"name": "verify"}]}), {"goal": 5},
                  graph="g", name="g", check_only=True)


python_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6)
    | st.binary(max_size=4) | st.just(object()),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
    | st.frozensets(st.integers(), max_size=3)
    | st.dictionaries(st.sampled_from(["name", "kind", "args", "nodes", "edges", "source",
                                       "target", "subgraph", "verify", 7]), inner, max_size=4),
    max_leaves=25)
proposal_like = st.fixed_dictionaries(
    {"nodes": st.lists(st.fixed_dictionaries(
        {"name": st.sampled_from(["a", "b", "START"]),
         "kind": st.sampled_from(["verify", "summarize", "apply_change", "nope"])},
        optional={"args": python_values}), min_size=1, max_size=3)},
    optional={"edges": st.lists(st.fixed_dictionaries(
        {"source": st.sampled_from(["__start__", "a", "b"]),
         "target": st.sampled_from(["a", "b", "__end__"])}), max_size=3)})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(python_values, proposal_like))
def test_any_python_data_is_a_proposal_admission_can_judge_or_a_proposal_error(governed, data):
    try:
        proposal = proposal_from_data(data)
    except ProposalError:
        return
    verdict = governed.checker().check(proposal)
    assert verdict.fingerprint == proposal.fingerprint()


input_values = st.one_of(st.integers(min_value=-(2**70), max_value=2**70), st.text(max_size=5),
                         st.lists(st.one_of(st.text(max_size=3), st.integers()), max_size=3),
                         st.booleans(), st.none())
graph_documents = st.fixed_dictionaries(
    {"nodes": st.lists(st.fixed_dictionaries(
        {"name": st.sampled_from(["a", "b"]),
         "kind": st.sampled_from(["verify", "summarize", "investigate", "nope"])}),
        min_size=1, max_size=2),
     "edges": st.lists(st.fixed_dictionaries(
         {"source": st.sampled_from(["__start__", "a", "b"]),
          "target": st.sampled_from(["a", "b"])}), max_size=3)},
    optional={"input": st.one_of(input_values, st.dictionaries(
        st.sampled_from(["goal", "summary", "findings", "verified", "unknown"]), input_values,
        max_size=3))})


inputs_to_a_runnable_graph = st.fixed_dictionaries(
    {"nodes": st.just([{"name": "verify"}]),
     "edges": st.just([{"source": "__start__", "target": "verify"}]),
     "input": st.dictionaries(st.sampled_from(["goal", "findings", "verified", "unknown"]),
                              input_values, max_size=2)})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(inputs_to_a_runnable_graph, graph_documents, st.text(max_size=40)))
def test_any_graph_file_runs_or_is_refused_with_a_grapharc_error(governed, in_tmp, document):
    path = Path(in_tmp) / "g.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    try:
        proposal, initial = read_graph_file(path)
        checked = run_graph(governed, proposal, initial, graph="g", name="g", check_only=True)
    except GraphARCError:
        return
    ran = run_graph(governed, proposal, initial, graph="g", name="g")
    assert ran.executed == checked.verdict.admitted
