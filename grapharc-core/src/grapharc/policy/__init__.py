"""Policy: where a policy document comes from, and (later) how it is evaluated."""

from __future__ import annotations

from grapharc.policy.sources import LoadedPolicy, PolicyContext, PolicyLoadError, resolve_policy

__all__ = ["LoadedPolicy", "PolicyContext", "PolicyLoadError", "resolve_policy"]
