"""Materialisation binds to the admitted proposal, builds bodies from the registry only."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from grapharc.planner import AdmissionChecker, Materializer, NotAdmitted, Subgraph
from grapharc.planner.nesting import current_depth
from grapharc.planner.registry import NodeRegistry, NodeSpec
from grapharc.runtime.errors import WritePermissionError


class State(BaseModel):
    found: str = ""
    fixed: str = ""
    read: str = ""

WRITES = {"search": {"found"}, "edit": {"fixed"}, "deploy": set(), "read": {"read"}}


def proposal(*names: str, **args: dict) -> Subgraph:
    nodes = [{"name": n, **({"args": args[n]} if n in args else {})} for n in names]
    edges = [{"source": a, "target": b} for a, b in zip(["__start__", *names], names, strict=False)]
    return Subgraph.model_validate({"nodes": nodes, "edges": edges})


def test_an_admitted_proposal_runs_with_bodies_from_the_registry(registry, deny_deploy):
    plan = proposal("search", "edit")
    verdict = AdmissionChecker(registry, deny_deploy).check(plan)
    graph = Materializer(registry, State, WRITES).materialize(verdict, plan)
    assert graph.invoke(State()) == {"found": "cause", "fixed": "edit", "read": ""}


def test_a_result_that_authorised_another_proposal_raises_not_admitted(registry, deny_deploy):
    verdict = AdmissionChecker(registry, deny_deploy).check(proposal("search"))
    with pytest.raises(NotAdmitted, match="authorised proposal"):
        Materializer(registry, State, WRITES).materialize(verdict, proposal("edit"))


def test_a_rejected_result_builds_nothing(registry, deny_deploy, factories):
    plan = proposal("deploy")
    verdict = AdmissionChecker(registry, deny_deploy).check(plan)
    with pytest.raises(NotAdmitted, match="not admitted"):
        Materializer(registry, State, WRITES).materialize(verdict, plan)
    assert factories.calls == []


def test_only_validated_args_reach_the_factory(registry, deny_deploy, factories):
    plan = proposal("read", read={"path": "src/app"})
    verdict = AdmissionChecker(registry, deny_deploy).check(plan)
    graph = Materializer(registry, State, WRITES).materialize(verdict, plan)
    assert graph.invoke(State())["read"] == "src/app:10"  # the schema's default was applied
    (name, args), = factories.calls
    assert name == "read" and type(args).__name__ == "PathArgs"


def test_a_kind_nobody_declared_writes_for_may_write_nothing(registry, deny_deploy):
    plan = proposal("edit")
    verdict = AdmissionChecker(registry, deny_deploy).check(plan)
    graph = Materializer(registry, State, {"search": {"found"}}).materialize(verdict, plan)
    with pytest.raises(WritePermissionError, match="'fixed'"):
        graph.invoke(State())


def test_a_nested_scope_runs_as_its_hosts_body(registry, deny_deploy):
    plan = Subgraph.model_validate({
        "nodes": [{"name": "scope", "subgraph": {
            "nodes": [{"name": "s", "kind": "search"}, {"name": "e", "kind": "edit"}],
            "edges": [{"source": "__start__", "target": "s"}, {"source": "s", "target": "e"}]}}],
        "edges": [{"source": "__start__", "target": "scope"}]})
    verdict = AdmissionChecker(registry, deny_deploy).check(plan)
    out = Materializer(registry, State, WRITES).materialize(verdict, plan).invoke(State())
    assert out["found"] == "cause" and out["fixed"] == "edit"


def test_parent_depth_comes_from_the_runtime_not_the_caller(deny_deploy):
    """A check made inside an admitted body sees the body's depth, whatever it claims."""
    seen: dict[str, object] = {}

    def planner_factory(spec: NodeSpec) -> object:
        def body(state: State) -> dict:
            seen["depth"] = current_depth()
            seen["verdict"] = checker.check(proposal("search"))
            return {}
        return body

    registry = NodeRegistry([NodeSpec(name="search", factory=lambda spec: lambda s: {}),
                             NodeSpec(name="plan", factory=planner_factory)]).freeze()
    checker = AdmissionChecker(registry, deny_deploy, max_depth=1)
    plan = proposal("plan")
    verdict = checker.check(plan)
    Materializer(registry, State, {}).materialize(verdict, plan).invoke(State())
    assert seen["depth"] == 1
    assert seen["verdict"].codes() == ["too_deep"]
    assert current_depth() == 0
