"""The planner reads replies robustly: every opener tried, the longest valid parse wins."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grapharc.models.replies import MAX_REPLY_CHARS, NoJSONError, extract_json
from grapharc.planner.planner_node import PlannerNode
from grapharc.testing import ScriptedChatModel

PROPOSAL = {"nodes": [{"name": "triage"}], "edges": [{"source": "__start__", "target": "triage"}]}


def test_a_bracket_in_prose_cannot_hijack_extraction():
    reply = 'Analysis (note [1]): {"supported": false}'
    assert extract_json(reply) == {"supported": False}


def test_the_longest_valid_parse_wins_over_an_earlier_short_one():
    reply = f'Use {{"a": 1}} as a hint. Plan: {json.dumps(PROPOSAL)} done [2]'
    assert extract_json(reply) == PROPOSAL


def test_a_reply_without_json_says_so():
    with pytest.raises(NoJSONError, match="no JSON"):
        extract_json("no plan today {not json")


def test_an_oversized_reply_is_refused_before_parsing():
    with pytest.raises(NoJSONError, match="limit"):
        extract_json("[" * (MAX_REPLY_CHARS + 1))


@settings(max_examples=200, deadline=None)
@given(prefix=st.text(max_size=60), suffix=st.text(max_size=60))
def test_prose_around_a_proposal_never_replaces_it(prefix, suffix):
    text = json.dumps(PROPOSAL)
    found = extract_json(f"{prefix} {text} {suffix}")
    assert found == PROPOSAL or json.dumps(PROPOSAL) in json.dumps(found)  # only a wrapper wins


def test_the_planner_turns_a_reply_into_a_proposal_and_counts_its_tokens():
    model = ScriptedChatModel(responses=["Here you go:\n```json\n" + json.dumps(PROPOSAL) + "\n```"])
    plan = PlannerNode(model, catalog=[{"kind": "triage"}]).propose("goal")
    assert plan.proposal is not None and plan.proposal.nodes[0].kind == "triage"
    assert plan.tokens > 0 and plan.error == ""


def test_the_planner_sees_the_catalog_goal_state_and_feedback_but_never_a_factory():
    model = ScriptedChatModel(responses=[json.dumps(PROPOSAL)])
    PlannerNode(model, catalog=[{"kind": "triage", "description": "look"}]).propose(
        "the goal", None, "edge_denied at edges[0]")
    prompt = model.calls[0][-1].content
    assert all(part in prompt for part in ("the goal", '"kind": "triage"', "edge_denied"))
    assert "factory" not in prompt


def test_a_reply_that_is_not_a_proposal_becomes_an_error_not_an_exception():
    model = ScriptedChatModel(responses=['{"nodes": [{"name": "x", "fn": "evil"}]}'])
    plan = PlannerNode(model, catalog=[]).propose("goal")
    assert plan.proposal is None and "Extra inputs" in plan.error
