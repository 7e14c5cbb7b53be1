"""Spend rules: every ceiling a document may set is one the run can keep."""

from __future__ import annotations

import pytest

from grapharc.policy.engine import PolicyDocumentError, PolicyEngine


def spend(**ceilings):
    return {"version": "1", "rules": [{"id": "cap", "resource": "spend", "action": "deny",
                                       **ceilings}]}


def test_a_zero_dollar_ceiling_is_refused_at_load_naming_the_key():
    with pytest.raises(PolicyDocumentError, match=r"max_cost_usd.*greater than 0"):
        PolicyEngine(spend(max_cost_usd=0))


def test_the_tightest_deny_ceiling_per_dimension_includes_dollars():
    document = spend(max_cost_usd=2.5)
    document["rules"].append({"id": "tighter", "resource": "spend", "action": "deny",
                              "max_cost_usd": 1.25, "max_tokens": 10})
    assert PolicyEngine(document).spend_ceilings() == {"cost_usd": 1.25, "tokens": 10}
