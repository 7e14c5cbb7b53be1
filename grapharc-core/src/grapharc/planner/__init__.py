"""Propose, admit, materialise: the node registry, proposals, the admission gate and the loop."""

from __future__ import annotations

from grapharc._lazy import lazy_exports
from grapharc.planner.admission import AdmissionChecker, AdmissionSetupError
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
from grapharc.planner.verdict import CHECKS, AdmissionResult, AdmissionStatus, Rejection

_LAZY = {
    "Materializer": "grapharc.planner.materialize",
    "NotAdmitted": "grapharc.planner.materialize",
    "PlannerNode": "grapharc.planner.planner_node",
    "GovernedLoop": "grapharc.planner.loop",
    "LoopLimits": "grapharc.planner.loop",
    "LoopResult": "grapharc.planner.rounds",
    "RoundRecord": "grapharc.planner.rounds",
    "StopReason": "grapharc.planner.rounds",
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


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)  # the kernel-backed half, on first use
