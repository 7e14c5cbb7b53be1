"""grapharc-gateway: real model backends behind core's ``backend/model`` spec grammar.

``get_model`` is core's spec resolver, re-exported here so
``from grapharc.gateway import get_model`` reaches every registered backend.
"""

from __future__ import annotations

from grapharc.models import get_model, resolve_backend

__all__ = ["get_model", "resolve_backend"]
