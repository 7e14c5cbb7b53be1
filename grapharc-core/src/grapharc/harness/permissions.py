"""The agent's tool permissions, at the import path the docs show.

The rules themselves live in :mod:`grapharc.decisions` (the policy engine compiles into them, so
they sit below both the policy and the agent); this module is their public name in the agent plane.
"""

from grapharc.decisions.decision import TIERS, Decision
from grapharc.decisions.tool_rules import PermissionDecision, PermissionPolicy, PermissionRule

__all__ = ["TIERS", "Decision", "PermissionDecision", "PermissionPolicy", "PermissionRule"]
