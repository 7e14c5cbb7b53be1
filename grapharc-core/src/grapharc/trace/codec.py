"""JSON for the trace readers: orjson when it is importable, the standard library otherwise.

Both decode the same bytes to the same values; orjson is several times faster per line,
which is what keeps every reader within 2x of a bare ``json.loads`` pass
(``benchmarks/trace_readers.py`` measures both).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

try:
    import orjson
except ImportError:
    _HAS_ORJSON = False
else:
    _HAS_ORJSON = True

BACKEND = "orjson" if _HAS_ORJSON else "stdlib"


def _stdlib_loads(raw: bytes) -> Any:
    """Decode the UTF-8 first: ``json.loads`` on bytes sniffs the encoding in Python, a third slower."""
    return json.loads(raw.decode("utf-8"))


def _stdlib_dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")


def _orjson_dumps(value: Any) -> bytes:
    return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS)


loads: Callable[[bytes], Any] = orjson.loads if _HAS_ORJSON else _stdlib_loads
"""Decode one line (bytes) of a trace."""

dumps: Callable[[Any], bytes] = _orjson_dumps if _HAS_ORJSON else _stdlib_dumps
"""Encode one value compactly as UTF-8 bytes (no trailing newline)."""
