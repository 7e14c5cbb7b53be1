"""What may cross the sandbox's process boundary: plain JSON data, checked by type.

``None``, ``bool``, ``int``, finite ``float``, ``str``, lists and string-keyed dicts. A tuple,
an int-keyed dict or a ``datetime`` is refused rather than silently becoming something else
on the way through ``json``.
"""

from __future__ import annotations

import math
from typing import Any


def json_problem(value: Any, where: str) -> str | None:
    """Where ``value`` stops being plain JSON data (e.g. ``"result[2]: tuple"``), or None."""
    if value is None or type(value) in (bool, int, str):
        return None
    if type(value) is float:
        return None if math.isfinite(value) else f"{where}: {value!r} (not a finite number)"
    if type(value) is list:
        return next((problem for index, item in enumerate(value)
                     if (problem := json_problem(item, f"{where}[{index}]"))), None)
    if type(value) is dict:
        for key, item in value.items():
            if type(key) is not str:
                return f"{where}: key {key!r} ({type(key).__name__}, not str)"
            if problem := json_problem(item, f"{where}.{key}"):
                return problem
        return None
    return f"{where}: {type(value).__name__}"
