"""Admission never admits what cannot be built: writes the state lacks, same-superstep write clashes."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import Field

from grapharc import GraphARCState
from grapharc.harness.permissions import Decision
from grapharc.planner import (
    AdmissionChecker,
    AdmissionSetupError,
    EdgePolicy,
    EdgeRule,
    Materializer,
    NodeRegistry,
    NodeSpec,
    Subgraph,
)
from grapharc.runtime.errors import GraphBuildError, UnknownFieldError, WriteConflictError

ALLOW = EdgePolicy(rules=(EdgeRule(action=Decision.ALLOW, id="all"),))
VALUES: dict[str, Any] = {"summary": "s", "count": 1, "notes": ["n"]}


class State(GraphARCState):
    summary: str = ""
    count: int = 0
    notes: Annotated[list[str], operator.add] = Field(default_factory=list)


def writer(spec: NodeSpec) -> Any:
    return lambda state: {field: VALUES[field] for field in spec.writes}


REGISTRY = NodeRegistry([
    NodeSpec(name="summarise", factory=writer, writes={"summary"}),
    NodeSpec(name="tally", factory=writer, writes={"count"}),
    NodeSpec(name="note", factory=writer, writes={"notes"}),
    NodeSpec(name="stray", factory=writer, writes={"answer"}),
]).freeze()


def proposal(nodes: list[tuple[str, str]], edges: list[tuple[str, str]]) -> Subgraph:
    return Subgraph.model_validate({
        "nodes": [{"name": name, "kind": kind} for name, kind in nodes],
        "edges": [{"source": source, "target": target} for source, target in edges]})


@pytest.fixture
def materializer() -> Materializer:
    return Materializer(REGISTRY, State)


@pytest.fixture
def checker(materializer: Materializer) -> AdmissionChecker:
    return AdmissionChecker(REGISTRY, ALLOW, target=materializer.target)


def test_a_write_to_a_field_the_state_lacks_is_refused_naming_node_and_field(checker, materializer):
    stray = proposal([("lookup", "stray")], [("__start__", "lookup")])

    verdict = checker.check(stray)

    assert verdict.codes() == ["write_unknown_field"]
    rejection = verdict.rejections[0]
    assert (rejection.check, rejection.location) == ("kinds", "nodes[0]")
    assert "'lookup'" in rejection.message and "'answer'" in rejection.message
    unchecked = AdmissionChecker(REGISTRY, ALLOW).check(stray)
    with pytest.raises(UnknownFieldError):  # what admitting it used to lead to
        materializer.materialize(unchecked, stray)


def test_two_siblings_writing_one_field_without_a_reducer_are_refused(checker, materializer):
    siblings = proposal([("a", "summarise"), ("b", "summarise")],
                        [("__start__", "a"), ("__start__", "b")])

    verdict = checker.check(siblings)

    assert verdict.codes() == ["write_conflict"]
    assert verdict.rejections[0].check == "edges"
    assert "'a' and 'b'" in verdict.rejections[0].message
    assert "'summary'" in verdict.rejections[0].message
    with pytest.raises(WriteConflictError):
        materializer.materialize(AdmissionChecker(REGISTRY, ALLOW).check(siblings), siblings)


def test_nodes_that_meet_in_one_superstep_from_different_sources_are_refused_too(checker,
                                                                                 materializer):
    cousins = proposal([("a", "tally"), ("b", "note"), ("c", "summarise"), ("d", "summarise")],
                       [("__start__", "a"), ("__start__", "b"), ("a", "c"), ("b", "d")])

    verdict = checker.check(cousins)

    assert verdict.codes() == ["write_conflict"]
    assert "'c' and 'd'" in verdict.rejections[0].message
    built = materializer.materialize(AdmissionChecker(REGISTRY, ALLOW).check(cousins), cousins)
    with pytest.raises(Exception, match="one value per step"):  # the kernel's compile misses it
        built.invoke({})


def test_one_field_written_in_different_supersteps_is_admitted_and_runs(checker, materializer):
    chain = proposal([("a", "summarise"), ("b", "tally"), ("c", "summarise")],
                     [("__start__", "a"), ("__start__", "b"), ("b", "c")])

    verdict = checker.check(chain)

    assert verdict.admitted, verdict.feedback()
    assert materializer.materialize(verdict, chain).invoke({})["summary"] == "s"


def test_parallel_writers_of_a_field_with_a_reducer_are_admitted_and_merge(checker, materializer):
    fan = proposal([("a", "note"), ("b", "note")], [("__start__", "a"), ("__start__", "b")])

    verdict = checker.check(fan)

    assert verdict.admitted, verdict.feedback()
    assert materializer.materialize(verdict, fan).invoke({})["notes"] == ["n", "n"]


def test_a_scope_whose_nodes_write_a_field_with_a_reducer_is_refused(checker, materializer):
    scoped = Subgraph.model_validate({
        "nodes": [{"name": "inner", "subgraph": {
            "nodes": [{"name": "n", "kind": "note"}], "edges": [{"source": "__start__",
                                                                  "target": "n"}]}}],
        "edges": [{"source": "__start__", "target": "inner"}]})

    verdict = checker.check(scoped)

    assert verdict.codes() == ["scope_writes_reducer_field"]
    assert verdict.rejections[0].location == "nodes[0]"
    with pytest.raises(GraphBuildError, match="merged twice"):
        materializer.materialize(AdmissionChecker(REGISTRY, ALLOW).check(scoped), scoped)


def test_a_scope_and_a_sibling_that_write_one_field_clash_like_any_two_nodes(checker):
    scoped = Subgraph.model_validate({
        "nodes": [{"name": "inner", "subgraph": {
            "nodes": [{"name": "n", "kind": "tally"}], "edges": [{"source": "__start__",
                                                                  "target": "n"}]}},
                  {"name": "outer", "kind": "tally"}],
        "edges": [{"source": "__start__", "target": "inner"},
                  {"source": "__start__", "target": "outer"}]})

    assert checker.check(scoped).codes() == ["write_conflict"]


def test_build_failures_are_reported_beside_every_other_check(checker):
    everything = proposal([("a", "stray"), ("b", "summarise"), ("c", "summarise"), ("d", "nope")],
                          [("__start__", "a"), ("__start__", "b"), ("__start__", "c"),
                           ("__start__", "d")])

    verdict = checker.check(everything)

    assert verdict.codes() == ["kind_unknown", "write_unknown_field", "write_conflict"]


node_lists = st.lists(st.sampled_from(["summarise", "tally", "note"]), min_size=1, max_size=7)


@st.composite
def dags(draw: st.DrawFn) -> Subgraph:
    """Acyclic proposals over the registry: edges only run from a lower to a higher index."""
    kinds = draw(node_lists)
    names = [f"n{index}" for index in range(len(kinds))]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True)) if pairs else []
    starts = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    return proposal(list(zip(names, kinds, strict=True)),
                    [("__start__", name) for name in starts] + edges)


@settings(max_examples=150, deadline=None)
@given(dags())
def test_whatever_admission_admits_builds_and_runs(graph):
    materializer = Materializer(REGISTRY, State)
    verdict = AdmissionChecker(REGISTRY, ALLOW, target=materializer.target).check(graph)
    if verdict.admitted:
        materializer.materialize(verdict, graph).invoke({})
    else:
        assert set(verdict.codes()) <= {"write_conflict", "unreachable_node"}, verdict.feedback()


def test_a_target_over_another_registry_cannot_back_a_checker():
    other = NodeRegistry([NodeSpec(name="summarise", factory=writer, writes={"summary"})]).freeze()

    with pytest.raises(AdmissionSetupError, match="another registry"):
        AdmissionChecker(REGISTRY, ALLOW, target=Materializer(other, State).target)
