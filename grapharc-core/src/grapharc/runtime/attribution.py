"""Who a run is for: a tenant and free-form labels, set per run and written on its trace.

They come from the run's LangChain config metadata, where per-run annotations
belong: ``config={"metadata": {"tenant": "acme", "labels": {"team": "checkout"}}}``.
They are written on ``run_start`` and ``run_end``; readers attribute the run's
node events to them, so ``metrics``/``cost`` can group by tenant or by label. A tenant is kept
case-folded (``grapharc.config.tenants``), so ``ACME`` and ``acme`` are one tenant's runs.
"""

from __future__ import annotations

from typing import Any

from grapharc.config.tenants import tenant_name
from grapharc.runtime.errors import RunInputError
from grapharc.trace.schema import LABELS, TENANT

MAX_TEXT = 200
MAX_LABELS = 50


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT:
        raise RunInputError(f"{what} must be a non-empty string of at most {MAX_TEXT} characters, "
                            f"got {value!r:.80}")
    return value


def run_attribution(config: Any) -> dict[str, Any]:
    """The ``tenant``/``labels`` trace fields a run's config asks for (validated), or none.

    The metadata keys are the trace field names themselves."""
    metadata = (config or {}).get("metadata") or {}
    fields: dict[str, Any] = {}
    if metadata.get(TENANT) is not None:
        fields[TENANT] = tenant_name(_text(metadata[TENANT], f"metadata[{TENANT!r}]"))
    labels = metadata.get(LABELS)
    if labels is not None:
        if not isinstance(labels, dict) or len(labels) > MAX_LABELS:
            raise RunInputError(f"metadata[{LABELS!r}] must be a mapping of at most {MAX_LABELS} "
                                f"string keys to string values, got {type(labels).__name__}")
        fields[LABELS] = {_text(key, "a label name"): _text(value, f"label {key!r}")
                            for key, value in labels.items()}
    return fields
