"""A search's ``filter``, read once into conditions every backend evaluates alike.

LangGraph's filter: ``{"field": value}`` is equality, ``{"field": {"$gt": 3}}`` applies the
operators ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt`` and ``$lte``, and a nested object
without operators descends into the field (``{"author": {"name": "Ada"}}``). Conditions
name a path of object keys, an operator and an operand, so a SQL backend translates them
and the in-process one calls ``passes``. What LangGraph's own stores leave loose is fixed
here: equality is JSON's (``true`` is not ``1``; a list equals a list of equal items), an
ordering compares numbers with numbers or strings with strings and fails on anything else,
and a missing field reads as ``null`` (a path through a non-object matches nothing).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from grapharc.memory.longterm.contracts import InvalidItemSearchError

OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})
ORDERINGS = frozenset({"$gt", "$gte", "$lt", "$lte"})
BIGGEST = 2**63 - 1
"""The largest integer a condition compares with: SQL backends bind operands as 64-bit integers."""


@dataclass(frozen=True)
class Condition:
    """The value at ``path`` (object keys from the item's value) against ``operand``."""

    path: tuple[str, ...]
    operator: str
    operand: Any


class _Unreachable:
    """The path crosses something that is not an object: no condition holds."""


UNREACHABLE = _Unreachable()


def conditions(filter: Mapping[str, Any] | None) -> list[Condition]:
    """The conditions ``filter`` asks for; ``InvalidItemSearchError`` names what cannot be read."""
    if filter is None:
        return []
    if not isinstance(filter, Mapping):
        raise InvalidItemSearchError(f"a search filter must be an object, not {type(filter).__name__}")
    found: list[Condition] = []
    _read(filter, (), found)
    return found


def _read(filter: Mapping[str, Any], path: tuple[str, ...], found: list[Condition]) -> None:
    for field, wanted in filter.items():
        if not isinstance(field, str) or not field:
            raise InvalidItemSearchError(f"filter field {field!r} is not a non-empty string")
        at = (*path, field)
        if isinstance(wanted, Mapping) and any(str(name).startswith("$") for name in wanted):
            for operator, operand in wanted.items():
                found.append(_condition(at, operator, operand))
        elif isinstance(wanted, Mapping):
            if not wanted:
                raise InvalidItemSearchError(f"filter on {'.'.join(at)!r} is an empty object",
                                             hint="name the fields to match inside it")
            _read(wanted, at, found)
        else:
            found.append(_condition(at, "$eq", wanted))


def _condition(path: tuple[str, ...], operator: Any, operand: Any) -> Condition:
    shown = ".".join(path)
    if operator not in OPERATORS:
        raise InvalidItemSearchError(f"filter on {shown!r} uses the operator {operator!r}",
                                     hint=f"operators: {', '.join(sorted(OPERATORS))}")
    if operator in ORDERINGS and (isinstance(operand, bool) or not isinstance(operand, int | float | str)):
        raise InvalidItemSearchError(f"filter on {shown!r}: {operator} compares with a number or "
                                     f"a string, not {operand!r}")
    if isinstance(operand, int) and not -BIGGEST <= operand <= BIGGEST:
        raise InvalidItemSearchError(f"filter on {shown!r}: {operator} {operand} is outside the 64-bit "
                                     f"integers the stores compare", hint="give it as a float")
    try:
        json.dumps(operand, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidItemSearchError(f"filter on {shown!r}: {operand!r} is not JSON") from exc
    return Condition(path, operator, operand)


def value_at(value: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """What ``path`` reaches in ``value``: ``None`` for a missing last key, ``UNREACHABLE``
    when a step before it is not an object."""
    current: Any = value
    for field in path:
        if not isinstance(current, Mapping):
            return UNREACHABLE
        current = current.get(field)
    return current


def json_equal(left: Any, right: Any) -> bool:
    """Equality as JSON sees it: booleans are not numbers, 1 equals 1.0, containers item by item."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        return len(left) == len(right) and all(json_equal(a, b) for a, b in zip(left, right, strict=True))
    return type(left) is type(right) and left == right


def _ordered(found: Any, operator: str, operand: Any) -> bool:
    """``found`` against ``operand`` by an ordering operator: numbers with numbers, strings
    with strings; anything else fails."""
    if isinstance(found, bool) or not isinstance(found, int | float | str):
        return False
    if isinstance(found, str) != isinstance(operand, str):
        return False
    comparison: int = (found > operand) - (found < operand)
    return {"$gt": comparison > 0, "$gte": comparison >= 0, "$lt": comparison < 0,
            "$lte": comparison <= 0}[operator]


def holds(condition: Condition, value: Mapping[str, Any]) -> bool:
    """Whether ``value`` meets ``condition``."""
    found = value_at(value, condition.path)
    if found is UNREACHABLE:
        return False
    if condition.operator == "$eq":
        return json_equal(found, condition.operand)
    if condition.operator == "$ne":
        return not json_equal(found, condition.operand)
    return _ordered(found, condition.operator, condition.operand)


def passes(value: Mapping[str, Any], found: list[Condition]) -> bool:
    """Whether ``value`` meets every condition."""
    return all(holds(condition, value) for condition in found)
