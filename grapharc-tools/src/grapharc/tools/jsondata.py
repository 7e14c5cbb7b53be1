"""Plain JSON data, checked by type: what may cross a process or container boundary.

``None``, ``bool``, ``int``, finite ``float``, ``str``, lists and string-keyed dicts. A tuple,
an int-keyed dict or a ``datetime`` is refused rather than silently becoming something else on
the way through ``json``. Standard library only: the container's runner imports it in the image.
"""

from __future__ import annotations

import math
from typing import Any

MAX_DEPTH = 200
"""Deeper data is refused: JSON encoders and decoders recurse, and no tool needs it."""


def json_problem(value: Any, where: str) -> str | None:
    """Where ``value`` stops being plain JSON data (e.g. ``"args.when: datetime"``), or None.

    Walked with a stack rather than recursion, so a hostile nesting is named, not a crash.
    """
    stack = [(value, where, 0)]
    while stack:
        item, at, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"{at}: nested deeper than {MAX_DEPTH}"
        if type(item) is float and not math.isfinite(item):
            return f"{at}: {item!r} (not a finite number)"
        if type(item) is list:
            children = list(enumerate(item))
            stack.extend((child, f"{at}[{index}]", depth + 1) for index, child in reversed(children))
        elif type(item) is dict:
            bad = [key for key in item if type(key) is not str]
            if bad:
                return f"{at}: key {bad[0]!r} ({type(bad[0]).__name__}, not str)"
            stack.extend((child, f"{at}.{key}", depth + 1) for key, child in reversed(list(item.items())))
        elif item is not None and type(item) not in (bool, int, float, str):
            return f"{at}: {type(item).__name__}"
    return None
