"""The Python entry points that take user data refuse every bad value with GraphARC's own error.

Budget, policy documents, proposals (and the admission check over them), graph files and
claims get hypothesis-made values: wrong types, NaN, infinities, huge integers, non-JSON
objects, control characters and deep nesting. Each either accepts the value or raises a
``GraphARCError`` subclass; never a bare TypeError, ValueError, KeyError or RecursionError.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grapharc import Budget
from grapharc.errors import GraphARCError
from grapharc.memory.claims import Claim, Provenance, normalise_entity
from grapharc.memory.inprocess import InMemoryClaimStore
from grapharc.planner import AdmissionChecker, EdgePolicy
from grapharc.planner.proposal import parse_proposal, proposal_from_data
from grapharc.policy.engine import PolicyEngine
from grapharc.policy.files import parse_policy_text
from grapharc.testing import plugin_host

SETTINGS = settings(max_examples=150, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=2**63, max_value=2**200),
    st.floats(), st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e308]),
    st.text(max_size=30), st.sampled_from(["", " ", "\x00", "\x1b[31m", "x" * 5000, "__start__", "__end__"]),
    st.builds(object), st.binary(max_size=10), st.sets(st.integers(), max_size=2))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=20)
"""Anything a caller could hand over, JSON or not."""


def deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": [value]}
    return value


def accepted_or_refused(call: Any, *args: Any, **kwargs: Any) -> Any:
    """The result of the call, or None when it refused with GraphARC's own error."""
    try:
        return call(*args, **kwargs)
    except GraphARCError:
        return None


# -- Budget ---------------------------------------------------------------------------------------


@SETTINGS
@given(field=st.sampled_from(["max_iterations", "max_tokens", "max_seconds", "max_concurrency",
                              "max_cost_usd"]), value=values)
def test_a_budget_takes_a_value_or_refuses_it_with_invalid_budget_error(field, value):
    budget = accepted_or_refused(Budget, **{field: value})
    if budget is not None and getattr(budget, field) is not None:
        assert getattr(budget, field) > 0


# -- policy documents -----------------------------------------------------------------------------

rules = st.fixed_dictionaries({}, optional={
    "id": values, "resource": st.one_of(st.sampled_from(["node", "edge", "tool", "spend"]), values),
    "action": st.one_of(st.sampled_from(["allow", "deny", "ask"]), values),
    "kind": values, "source": values, "target": values, "max_cost_usd": values, "tenant": values})
documents = st.one_of(values, st.fixed_dictionaries({}, optional={
    "version": values, "description": values, "rules": st.one_of(st.lists(rules, max_size=4), values)}))


@SETTINGS
@given(document=documents)
def test_a_policy_document_is_validated_or_refused_with_policy_document_error(document):
    accepted_or_refused(PolicyEngine, document)


@SETTINGS
@given(raw=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode)))
def test_policy_text_is_parsed_or_refused_with_policy_load_error(raw):
    accepted_or_refused(parse_policy_text, raw, "fuzz.toml")


@pytest.mark.parametrize("depth", [100, 2000, 50_000])
def test_a_deeply_nested_policy_document_is_refused(depth):
    accepted_or_refused(PolicyEngine, {"version": "x", "rules": [deep(depth)]})
    accepted_or_refused(parse_policy_text, b"a = " + b"[" * depth + b"]" * depth, "deep.toml")


# -- proposals, the admission check, graph files -------------------------------------------------

KINDS = ["collect_context", "summarize", "no_such_kind", ""]
nodes = st.fixed_dictionaries({"name": st.one_of(st.sampled_from(["a", "b", "c"]), values),
                               "kind": st.one_of(st.sampled_from(KINDS), values)},
                              optional={"args": values, "subgraph": values})
edges = st.fixed_dictionaries({"source": st.one_of(st.sampled_from(["__start__", "a", "b", "c"]), values),
                               "target": st.one_of(st.sampled_from(["__end__", "a", "b", "c"]), values)},
                              optional={"when": values})
proposals = st.one_of(values, st.fixed_dictionaries(
    {"nodes": st.one_of(st.lists(nodes, max_size=4), values)},
    optional={"edges": st.one_of(st.lists(edges, max_size=5), values), "rationale": values}))


@pytest.fixture(scope="module")
def checker() -> AdmissionChecker:
    from grapharc.planner.surface import PLUGINS, load_surface

    with plugin_host(installed=False):
        return AdmissionChecker(load_surface(PLUGINS).registry, EdgePolicy())


@SETTINGS
@given(data=proposals)
def test_a_proposal_is_built_and_checked_or_refused_with_proposal_error(checker, data):
    proposal = accepted_or_refused(proposal_from_data, data)
    if proposal is not None:
        verdict = checker.check(proposal)
        assert verdict.admitted in (True, False)
        verdict.event()


@SETTINGS
@given(text=st.one_of(st.text(max_size=300), st.binary(max_size=300),
                      st.sampled_from(["NaN", "[" * 100_000, '{"nodes": [' * 5000, str(2**5000)])))
def test_proposal_text_is_parsed_or_refused_with_proposal_error(text):
    accepted_or_refused(parse_proposal, text)


@SETTINGS
@given(raw=st.one_of(st.binary(max_size=300), st.sampled_from([b"\xff\xfe{}", b"{" * 100_000, b""])))
def test_a_graph_file_is_read_or_refused_with_proposal_error(tmp_path: Path, raw):
    from grapharc.planner.graph_file import read_graph_file

    path = tmp_path / "graph.json"
    path.write_bytes(raw)
    accepted_or_refused(read_graph_file, path)


# -- claims -----------------------------------------------------------------------------------------

NOW = datetime(2026, 1, 1, tzinfo=UTC)
provenances = st.one_of(values, st.fixed_dictionaries(
    {"source": st.one_of(st.just("crm"), values), "observed_at": st.one_of(st.just(NOW), values)},
    optional={"run_id": values}))


@SETTINGS
@given(subject=st.one_of(st.just("ACME Corp"), values), predicate=st.one_of(st.just("owns"), values),
       obj=st.one_of(st.just("x"), values), provenance=provenances)
def test_a_claim_is_made_and_stored_or_refused_with_graparc_error(subject, predicate, obj, provenance):
    claim = accepted_or_refused(Claim, subject=subject, predicate=predicate, object=obj,
                                provenance=provenance)
    if claim is not None:
        store = InMemoryClaimStore()
        store.add(claim)
        assert store.about(claim.subject) == [claim]


@SETTINGS
@given(source=values, observed_at=values)
def test_a_provenance_is_made_or_refused_with_graparc_error(source, observed_at):
    accepted_or_refused(Provenance, source=source, observed_at=observed_at)


@SETTINGS
@given(text=values)
def test_an_entity_name_is_normalised_or_refused_with_graparc_error(text):
    accepted_or_refused(normalise_entity, text)


@SETTINGS
@given(item=values)
def test_a_store_refuses_what_is_not_a_claim(item):
    store = InMemoryClaimStore()
    accepted_or_refused(store.add, item)
    accepted_or_refused(store.about, item)
    accepted_or_refused(store.get, item)
