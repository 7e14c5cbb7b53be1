"""Proposals are code-free data, parsed with errors that say where, whatever the input."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grapharc.planner import ProposalError, ProposedNode, Subgraph, parse_proposal

GOOD = {"nodes": [{"name": "triage"}, {"name": "fix", "kind": "patch", "args": {"n": 1}}],
        "edges": [{"source": "__start__", "target": "triage"},
                  {"source": "triage", "target": "fix"}]}


@pytest.mark.parametrize("key", ["body", "fn", "code"])
def test_a_proposal_cannot_carry_code(key):
    node = {"name": "x", "kind": "triage", key: "lambda s: s"}
    with pytest.raises(ProposalError, match=rf"nodes\[0\]\.{key}: Extra inputs"):
        parse_proposal(json.dumps({"nodes": [node]}))


def test_kind_defaults_to_the_name_and_then_only_kind_counts():
    assert ProposedNode(name="deploy").kind == "deploy"
    assert ProposedNode(name="search", kind="deploy").kind == "deploy"


def test_a_scope_node_takes_no_kind_and_no_args():
    inner = {"nodes": [{"name": "a"}]}
    with pytest.raises(ValueError, match="scope and takes no kind"):
        ProposedNode(name="s", kind="triage", subgraph=inner)
    with pytest.raises(ValueError, match="takes no args"):
        ProposedNode(name="s", subgraph=inner, args={"x": 1})


@pytest.mark.parametrize(("nodes", "message"), [
    ([{"name": "a"}, {"name": "a"}], "used twice"),
    ([{"name": "__start__"}], "not an identifier|reserved"),
    ([{"name": "not valid"}], "must be an identifier"),
    ([], "at least 1 item"),
])
def test_malformed_node_lists_are_refused(nodes, message):
    with pytest.raises(ProposalError, match=message):
        parse_proposal(json.dumps({"nodes": nodes}))


def test_the_fingerprint_is_canonical_and_ignores_the_rationale():
    a = Subgraph.model_validate(GOOD)
    b = Subgraph.model_validate({**json.loads(json.dumps(GOOD)), "rationale": "because"})
    shuffled = parse_proposal(json.dumps(GOOD, indent=3, sort_keys=True))
    assert a.fingerprint() == b.fingerprint() == shuffled.fingerprint()
    changed = json.loads(json.dumps(GOOD))
    changed["nodes"][1]["args"]["n"] = 2
    assert Subgraph.model_validate(changed).fingerprint() != a.fingerprint()


@pytest.mark.parametrize(("text", "message"), [
    ('{"nodes": [', r"invalid JSON at line 1, column 12"),
    ("[1, 2]", "expected a JSON object, got list"),
    ('{"nodes": [{"name": "a", "args": {"n": NaN}}]}', "NaN is not a JSON number"),
    ('{"nodes": [{"name": "a", "args": {"n": ' + "9" * 5000 + "}}]}", "unreadable number"),
    ("[" * 100_000, "nested too deeply"),
    ('{"a":' * 70 + "1" + "}" * 70, "nesting deeper than 64"),
])
def test_malformed_documents_are_refused_with_a_location(text, message):
    with pytest.raises(ProposalError, match=message):
        parse_proposal(text)


def test_binary_input_is_refused():
    with pytest.raises(ProposalError, match="binary data"):
        parse_proposal(b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(ProposalError, match="not UTF-8"):
        parse_proposal(b"\xff\xfe{}")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_either_parses_or_raises_a_proposal_error(text):
    with contextlib.suppress(ProposalError):
        assert isinstance(parse_proposal(text), Subgraph)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["nodes", "edges", "name", "kind", "args", "source", "target",
                         "subgraph", "x"]), inner, max_size=4),
    max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_value_either_parses_or_raises_a_proposal_error(value):
    with contextlib.suppress(ProposalError):
        assert isinstance(parse_proposal(json.dumps(value)), Subgraph)
