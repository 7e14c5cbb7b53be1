"""Tool permissions on their own: tiered deny -> ask -> allow, unmatched deny, any-layer deny wins."""

from __future__ import annotations

from grapharc.harness.permissions import Decision, PermissionPolicy, PermissionRule


def test_tiers_decide_not_the_order_rules_were_written_in():
    policy = PermissionPolicy([PermissionRule("*", Decision.ALLOW),
                               PermissionRule("run_*", Decision.ASK),
                               PermissionRule("run_command", Decision.DENY)])
    assert policy.decide("run_command").decision is Decision.DENY
    assert policy.decide("run_tests").decision is Decision.ASK
    assert policy.decide("read_file").decision is Decision.ALLOW


def test_an_unmatched_tool_is_denied_with_a_reason():
    decided = PermissionPolicy.from_flags(allow=["read_*"]).decide("write_file")
    assert decided.decision is Decision.DENY and decided.rule is None
    assert "unmatched is deny" in decided.reason


def test_merging_layers_lets_a_deny_from_either_win():
    document = PermissionPolicy([PermissionRule("rm", Decision.DENY, layer="document")])
    merged = document.merged(PermissionPolicy.from_flags(allow=["*"]))
    assert merged.decide("rm").decision is Decision.DENY
    assert merged.decide("ls").decision is Decision.ALLOW
