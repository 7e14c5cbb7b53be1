"""A long-term store search's scope as SQL: namespace prefix, expiry and ``filter`` conditions.

Conditions come from ``grapharc.memory.longterm.filters`` and mean here what they mean
there: equality is JSON's (``json_type`` keeps ``true`` apart from ``1``), an ordering
compares numbers with numbers or strings with strings, a missing field reads as ``null``,
and a path through a non-object matches nothing. A list or object operand is compared by
``grapharc_json_equal``, a function ``register_functions`` adds to the connection (SQLite's
``json()`` keeps key order and number spelling, JSON equality does not). Field names become
quoted JSON path labels, which SQLite cannot escape, so a name holding ``"`` is refused.
A namespace is stored as its labels joined by ``.`` (no label holds one): the namespaces
under a prefix are that text itself or the range from ``prefix.`` up to ``prefix/``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from grapharc.memory.longterm.contracts import InvalidItemSearchError, Namespace
from grapharc.memory.longterm.filters import Condition, json_equal

SEPARATOR = "."
AFTER_SEPARATOR = chr(ord(SEPARATOR) + 1)

Clause = tuple[str, list[Any]]


def encode_namespace(namespace: Namespace) -> str:
    """The namespace as the text the ``items`` table holds."""
    return SEPARATOR.join(namespace)


def decode_namespace(text: str) -> Namespace:
    """The namespace the ``items`` table's text stands for."""
    return tuple(text.split(SEPARATOR))


def register_functions(connection: sqlite3.Connection) -> None:
    """Add ``grapharc_json_equal(a, b)``: whether two JSON texts are equal as JSON."""
    connection.create_function(
        "grapharc_json_equal", 2,
        lambda left, right: int(left is not None and json_equal(json.loads(left), json.loads(right))),
        deterministic=True)


def prefix_clause(prefix: Namespace) -> Clause:
    """Items whose namespace starts with ``prefix`` (every item for the empty prefix)."""
    if not prefix:
        return "1", []
    text = encode_namespace(prefix)
    return ("(namespace = ? OR (namespace > ? AND namespace < ?))",
            [text, text + SEPARATOR, text + AFTER_SEPARATOR])


def live_clause(now: int) -> Clause:
    """Items not expired at ``now`` (microseconds since the epoch)."""
    return "(expires_at IS NULL OR expires_at > ?)", [now]


def _path(fields: Sequence[str]) -> str:
    for field in fields:
        if '"' in field:
            raise InvalidItemSearchError(f"filter field {field!r} holds a '\"', which the SQLite item "
                                         "store cannot name in a JSON path")
    return "$" + "".join(f'."{field}"' for field in fields)


def _equal(path: str, operand: Any) -> Clause:
    if operand is None:
        return "coalesce(json_type(value, ?), 'null') = 'null'", [path]
    if isinstance(operand, bool):
        return "json_type(value, ?) = ?", [path, "true" if operand else "false"]
    if isinstance(operand, int | float):
        return "(json_type(value, ?) IN ('integer', 'real') AND json_extract(value, ?) = ?)", \
            [path, path, operand]
    if isinstance(operand, str):
        return "(json_type(value, ?) = 'text' AND json_extract(value, ?) = ?)", [path, path, operand]
    kind = "object" if isinstance(operand, dict) else "array"
    return ("(json_type(value, ?) = ? AND grapharc_json_equal(json_extract(value, ?), ?))",
            [path, kind, path, json.dumps(operand)])


_ORDERINGS = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def condition_clause(condition: Condition) -> Clause:
    """One condition as SQL over the ``value`` column."""
    path = _path(condition.path)
    reach_sql, reach = ("1", []) if len(condition.path) == 1 else \
        ("json_type(value, ?) = 'object'", [_path(condition.path[:-1])])
    if condition.operator in ("$eq", "$ne"):
        sql, parameters = _equal(path, condition.operand)
        negation = "NOT " if condition.operator == "$ne" else ""
        return f"({reach_sql} AND {negation}{sql})", [*reach, *parameters]
    kinds = "('text')" if isinstance(condition.operand, str) else "('integer', 'real')"
    return (f"({reach_sql} AND json_type(value, ?) IN {kinds} "
            f"AND json_extract(value, ?) {_ORDERINGS[condition.operator]} ?)",
            [*reach, path, path, condition.operand])


def scope_clause(prefix: Namespace, conditions: Sequence[Condition], now: int) -> Clause:
    """Live items under ``prefix`` meeting every condition, as one ``WHERE`` expression."""
    clauses = [prefix_clause(prefix), live_clause(now), *(condition_clause(c) for c in conditions)]
    return " AND ".join(sql for sql, _ in clauses), [value for _, values in clauses for value in values]
