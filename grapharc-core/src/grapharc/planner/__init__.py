"""Propose, admit, materialise: the node registry, proposals, the admission gate and the loop."""

from __future__ import annotations

from typing import Any

from grapharc.planner.admission import (
    CHECKS,
    AdmissionChecker,
    AdmissionResult,
    AdmissionSetupError,
    AdmissionStatus,
    Rejection,
)
from grapharc.planner.proposal import (
    ProposalError,
    ProposedEdge,
    ProposedNode,
    Subgraph,
    fingerprint,
    parse_proposal,
)
from grapharc.planner.registry import (
    CostEstimate,
    DuplicateKindError,
    NodeRegistry,
    NodeSpec,
    RegistryFrozenError,
    UnknownKindError,
)
from grapharc.planner.rules import EdgePolicy, EdgeRule, NodePolicy, NodeRule, RuleDecision

_LAZY = {
    "Materializer": "grapharc.planner.materialize",
    "NotAdmitted": "grapharc.planner.materialize",
    "PlannerNode": "grapharc.planner.planner_node",
    "GovernedLoop": "grapharc.planner.loop",
    "LoopLimits": "grapharc.planner.loop",
    "LoopResult": "grapharc.planner.loop",
    "RoundRecord": "grapharc.planner.loop",
    "StopReason": "grapharc.planner.loop",
}

__all__ = [
    "CHECKS",
    "AdmissionChecker",
    "AdmissionResult",
    "AdmissionSetupError",
    "AdmissionStatus",
    "CostEstimate",
    "DuplicateKindError",
    "EdgePolicy",
    "EdgeRule",
    "NodePolicy",
    "NodeRegistry",
    "NodeRule",
    "NodeSpec",
    "ProposalError",
    "ProposedEdge",
    "ProposedNode",
    "RegistryFrozenError",
    "Rejection",
    "RuleDecision",
    "Subgraph",
    "UnknownKindError",
    "fingerprint",
    "parse_proposal",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)  # the kernel-backed half is imported on first use
    if module is None:
        raise AttributeError(f"module 'grapharc.planner' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
