"""A long-term store search's filter (``grapharc.memory.longterm.filters``) as a SQL condition on
``grapharc_store_items.value``, meaning what ``filters.holds`` means in Python.

A condition's path reaches its field only through objects (each step before the last must be a
JSON object, or nothing matches); a missing field reads as ``null``. ``$eq`` and ``$ne`` are JSONB
equality (``true`` is not ``1``, ``1`` is ``1.0``); an ordering compares a number with a number
(as ``numeric``) or a string with a string (by code point: ``COLLATE "C"`` over UTF-8) and fails on
anything else. Paths and operands are bound parameters, never SQL text.
"""

from __future__ import annotations

import json
from typing import Any

from grapharc.memory.longterm.filters import Condition

_ORDERING_SQL = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def where(conditions: list[Condition]) -> tuple[str, list[Any]]:
    """The SQL that holds for a value meeting every condition (``TRUE`` for none), and its parameters."""
    parts: list[str] = []
    params: list[Any] = []
    for condition in conditions:
        sql, bound = _one(condition)
        parts.append(sql)
        params.extend(bound)
    return (" AND ".join(parts) or "TRUE"), params


def _one(condition: Condition) -> tuple[str, list[Any]]:
    """One condition: the path reachable, then its test."""
    path = list(condition.path)
    reachable = ["jsonb_typeof(value #> %s::text[]) = 'object'" for _ in path[1:]]
    params: list[Any] = [path[:step] for step in range(1, len(path))]
    found = "COALESCE(value #> %s::text[], 'null'::jsonb)"
    if condition.operator in ("$eq", "$ne"):
        test = f"{found} {'=' if condition.operator == '$eq' else '<>'} %s::jsonb"
        params.extend([path, json.dumps(condition.operand)])
    elif isinstance(condition.operand, str):
        test = (f"jsonb_typeof({found}) = 'string' AND "
                f"(value #>> %s::text[]) COLLATE \"C\" {_ORDERING_SQL[condition.operator]} %s COLLATE \"C\"")
        params.extend([path, path, condition.operand])
    else:
        test = (f"jsonb_typeof({found}) = 'number' AND "
                f"(value #>> %s::text[])::numeric {_ORDERING_SQL[condition.operator]} %s::numeric")
        params.extend([path, path, repr(condition.operand)])
    return "(" + " AND ".join([*reachable, test]) + ")", params
