"""One trace event as one JSON line, whatever a node put in its state.

What is written, exactly (the same with orjson, used when importable, and with stdlib json):
strings over ``MAX_STRING_CHARS`` (2,000) characters keep their first 2,000 followed by
``TRUNCATION_MARKER``; pydantic models are written as ``model_dump(mode="json")``; enum members
as their value; UUIDs as their string; tuples as arrays; NaN and infinities as null (JSON has
none); keys that are not strings as their JSON text (``1``, ``true``, ``null``) or, failing that,
their repr; anything else, and nesting deeper than 254 levels, as ``{"__repr__": repr[:2000]}``.
Given a ``Redactor`` (:mod:`grapharc.redaction`), every string (and key) is redacted before it is
truncated, so no secret is written, whole or cut.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from enum import Enum
from typing import Any
from uuid import UUID

from pydantic import BaseModel

from grapharc.redaction import Redactor
from grapharc.trace import schema

try:
    import orjson
except ImportError:  # pragma: no cover - orjson ships with langsmith on CPython
    _HAS_ORJSON = False
else:
    _HAS_ORJSON = True

MAX_STRING_CHARS = schema.MAX_STRING_CHARS
TRUNCATION_MARKER = schema.TRUNCATION_MARKER
_MAX_DEPTH = 254


def encode_event(event: dict[str, Any], redactor: Redactor | None = None) -> bytes:
    """One JSON line. The fast encoder runs first; the cleaning walk only when it failed, a
    string in the line may need truncating, or the line holds a secret."""
    try:
        line = _dumps(event)
    except (TypeError, ValueError, OverflowError, RecursionError):
        return _dumps_clean(_clean(event, 0, redactor))
    secret = redactor is not None and redactor.found_in(line)
    if not secret and not _may_hold_a_long_string(line):
        return line
    cleaned = _clean(event, 0, redactor if secret else None)
    return line if cleaned is event else _dumps_clean(cleaned)


def _may_hold_a_long_string(line: bytes) -> bool:
    """Whether a string in the JSON ``line`` may have more than ``MAX_STRING_CHARS`` characters.

    A string's JSON bytes are never fewer than its characters, so a line in which no run
    between two quotes is longer (an escaped quote kept as two bytes of its run) holds none:
    a long line of short strings, a tool step's end with hundreds of messages, needs no
    cleaning walk (which costs several times the encoding). A false yes costs only the walk.
    """
    if len(line) <= MAX_STRING_CHARS:
        return False
    return max(map(len, line.replace(b'\\"', b"__").split(b'"'))) > MAX_STRING_CHARS


def _dumps_clean(value: Any) -> bytes:
    """Encode an already-cleaned value; stdlib json takes what orjson cannot (ints over 64 bits)."""
    try:
        return _dumps(value)
    except (TypeError, ValueError, OverflowError):
        return _dumps_stdlib(value)


def _default(value: Any, redactor: Redactor | None = None, *, cut: bool = False) -> Any:
    """What the encoders do with a value JSON has no type for; never raises. The fast encoder's
    reprs are whole (``cut`` False): a line that long goes through the cleaning walk, which cuts."""
    if isinstance(value, BaseModel):
        return _model_json(value, redactor, cut=cut)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, float):  # a float subclass, which orjson does not take natively
        return float(value)
    return _repr_of(value, redactor, cut=cut)


_STDLIB_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_default
)


def _dumps_stdlib(value: Any) -> bytes:
    return (_STDLIB_ENCODER.encode(value) + "\n").encode("utf-8")


def _dumps_orjson(value: Any) -> bytes:
    return orjson.dumps(value, default=_default, option=_ORJSON_OPTIONS)


if _HAS_ORJSON:
    _ORJSON_OPTIONS = (
        orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
    )
    _dumps: Callable[[Any], bytes] = _dumps_orjson
else:  # pragma: no cover - orjson ships with langsmith on CPython
    _dumps = _dumps_stdlib


def _clean(value: Any, depth: int, redactor: Redactor | None) -> Any:
    """``value`` with the rules in the module docstring applied, made of JSON types only.

    Returns ``value`` itself when nothing needed changing, so a clean event is not re-encoded.
    """
    kind = type(value)
    if kind is str:
        return _clean_str(value, redactor)
    if value is None or kind is int or kind is bool:
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    if depth >= _MAX_DEPTH:
        return _repr_of(value, redactor)
    if isinstance(value, dict):
        return _clean_dict(value, depth, redactor)
    if isinstance(value, list | tuple):
        items = [_clean(item, depth + 1, redactor) for item in value]
        if kind is list and all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items
    if isinstance(value, Enum):
        return _clean(value.value, depth + 1, redactor)
    if isinstance(value, str):
        return _clean_str(str.__str__(value), redactor)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _clean(float(value), depth, redactor)
    return _clean(_default(value, redactor, cut=True), depth + 1, redactor)


def _clean_dict(value: dict[Any, Any], depth: int, redactor: Redactor | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    changed = type(value) is not dict
    for key, item in value.items():
        new_key = _clean_str(key, redactor) if type(key) is str else _clean_key(key, redactor)
        new_item = _clean(item, depth + 1, redactor)
        changed = changed or new_key is not key or new_item is not item
        out[new_key] = new_item
    return out if changed else value


def _clean_key(key: Any, redactor: Redactor | None) -> str:
    """A dict key as stdlib json would write it, or its repr where json would refuse it."""
    if isinstance(key, Enum):
        return _clean_key(key.value, redactor)
    if isinstance(key, str):
        return _clean_str(str.__str__(key), redactor)
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    if isinstance(key, int):
        return int.__repr__(key)
    if isinstance(key, float):
        return float.__repr__(key)
    return _repr_of(key, redactor)[schema.REPR_KEY]


def _clean_str(text: str, redactor: Redactor | None) -> str:
    if redactor is not None:
        text = redactor.redact(text)
    if len(text) > MAX_STRING_CHARS:
        text = text[:MAX_STRING_CHARS] + TRUNCATION_MARKER
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: keep them visible as escapes
            text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _model_json(model: BaseModel, redactor: Redactor | None, *, cut: bool) -> Any:
    try:
        return model.model_dump(mode="json")
    except Exception:
        return _repr_of(model, redactor, cut=cut)


def _repr_of(value: Any, redactor: Redactor | None, *, cut: bool = True) -> dict[str, str]:
    """``{"__repr__": repr(value)}``: redacted, then cut to ``MAX_STRING_CHARS`` unless ``cut`` is
    False (the fast encoder's, whose long lines the cleaning walk redacts and cuts afterwards)."""
    try:
        text = repr(value)
    except Exception:
        text = f"<unrepresentable {type(value).__qualname__}>"
    if not cut:
        return {schema.REPR_KEY: text}
    if redactor is not None:
        text = redactor.redact(text)
    return {schema.REPR_KEY: _clean_str(text[:MAX_STRING_CHARS], None)}
