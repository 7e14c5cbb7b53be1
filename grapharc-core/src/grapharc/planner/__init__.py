"""Propose, admit, materialise: the node registry and (later) the admission gate."""

from __future__ import annotations

from grapharc.planner.registry import (
    CostEstimate,
    DuplicateKindError,
    NodeRegistry,
    NodeSpec,
    RegistryFrozenError,
    UnknownKindError,
)

__all__ = [
    "CostEstimate",
    "DuplicateKindError",
    "NodeRegistry",
    "NodeSpec",
    "RegistryFrozenError",
    "UnknownKindError",
]
