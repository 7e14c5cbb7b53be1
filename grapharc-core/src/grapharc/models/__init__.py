"""Model specs (``backend/model``) resolved through the model-backend registry.

Core owns the grammar and the scripted ``mock/`` backend; real backends come
from plugins (grapharc-gateway). A bare name with no slash is refused rather
than guessed, so a typo never reaches a paid backend.
"""

from __future__ import annotations

from grapharc.models.spec import (
    BareModelSpecError,
    ModelSpec,
    ModelSpecError,
    UnknownBackendError,
    get_model,
    known_backends,
    parse_spec,
    resolve_backend,
)
from grapharc.models.vendors import different_providers, vendor_of

__all__ = [
    "BareModelSpecError",
    "ModelSpec",
    "ModelSpecError",
    "UnknownBackendError",
    "different_providers",
    "get_model",
    "known_backends",
    "parse_spec",
    "resolve_backend",
    "vendor_of",
]
