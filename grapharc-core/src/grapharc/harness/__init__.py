"""The agent harness's governance surface: which tools a model may call, and who approves."""

from __future__ import annotations

from grapharc.harness.permissions import (
    Decision,
    PermissionDecision,
    PermissionPolicy,
    PermissionRule,
)

__all__ = ["Decision", "PermissionDecision", "PermissionPolicy", "PermissionRule"]
