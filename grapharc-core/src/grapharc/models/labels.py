"""The name a model's calls carry on the trace, so a rate card keyed by model spec can price them.

A model built from a spec (``get_model("openai/gpt-4o-mini")``) carries the spec in its LangChain
``metadata``, which LangChain hands to every callback of every call the model makes, also through
``bind_tools``; a model built by hand is named by LangChain's own ``ls_model_name``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SPEC_METADATA_KEY = "grapharc_model_spec"
"""The ``metadata`` key under which a model built from a spec carries that spec."""
_LANGCHAIN_NAME_KEY = "ls_model_name"


def tag_with_spec(model: Any, spec: str) -> Any:
    """``model`` with ``spec`` in its metadata (a model with no ``metadata`` is returned as it is)."""
    if hasattr(model, "metadata"):
        model.metadata = {**(model.metadata or {}), SPEC_METADATA_KEY: spec}
    return model


def call_label(metadata: Mapping[str, Any] | None) -> str | None:
    """The name of the model a call's callback ``metadata`` describes, or None if it names none."""
    if not metadata:
        return None
    name = metadata.get(SPEC_METADATA_KEY) or metadata.get(_LANGCHAIN_NAME_KEY)
    return name if isinstance(name, str) and name else None


def model_label(model: Any) -> str:
    """The name of ``model`` as its calls are recorded: its spec, else its model name, else its type."""
    metadata = getattr(model, "metadata", None)
    spec = metadata.get(SPEC_METADATA_KEY) if isinstance(metadata, Mapping) else None
    return str(spec or getattr(model, "model_name", None) or type(model).__name__)
