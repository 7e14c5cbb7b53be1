"""State values as JSON, the same way on every view (the SSE stream, a thread, its state).

JSON has no word for some values a graph's state may hold, so they are written as: bytes as
base64 text, NaN and infinities as null (as the JSONL trace writes them), sets as sorted arrays
(in iteration order when they cannot be sorted); the rest as FastAPI's encoder writes it. Strings
are never shortened: a view shows the checkpointed value whole.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

from fastapi.encoders import jsonable_encoder


def json_value(value: Any) -> Any:
    """``value`` as plain JSON data (dicts, lists, strings, finite numbers, booleans, null). Every
    key is kept: FastAPI's encoder drops keys starting ``_sa`` unless told not to (SQLAlchemy's)."""
    return _finite(jsonable_encoder(value, sqlalchemy_safe=False, custom_encoder={
        bytes: lambda b: base64.b64encode(b).decode("ascii"),
        set: _sorted, frozenset: _sorted,
    }))


def json_text(value: Any) -> str:
    """``value`` as JSON text (strict: never NaN or Infinity). A value that is plain JSON already,
    as most states and node writes are, is written as it is, without ``json_value``'s walk."""
    try:
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):  # a value JSON has no word for: converted as json_value says
        return json.dumps(json_value(value), allow_nan=False)


def _sorted(items: set[Any] | frozenset[Any]) -> list[Any]:
    encoded = [json_value(item) for item in items]
    try:
        return sorted(encoded)
    except TypeError:
        return encoded


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value
