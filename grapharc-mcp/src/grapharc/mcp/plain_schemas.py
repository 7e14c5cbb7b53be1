"""A quick check of a call's arguments for the plain input schemas most MCP servers list.

``jsonschema`` re-walks a schema on every call, building a validator per keyword it descends into:
tens of microseconds for ``{"text": {"type": "string"}}``. Most servers list schemas of just that
shape, named properties of simple JSON types, so for those :func:`quick_check` compiles the schema
once into a few type and key tests. It is only ever a short cut to *valid*: it passes arguments
that ``jsonschema`` would certainly pass (its type tests are stricter than JSON Schema's: exact
Python types, no subclass and no whole-number float), and anything else, a failed check or a schema
with any keyword outside the plain subset, goes to ``jsonschema``, which decides exactly as before.
No library offers this sound-but-partial check, hence this module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

QuickCheck = Callable[[Mapping[str, Any]], bool]
"""Whether arguments certainly fit their schema (False: ask ``jsonschema``)."""

ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment",
                         "deprecated", "readOnly", "writeOnly"})
"""Keywords that never fail a value under JSON Schema 2020-12."""
OBJECT_KEYWORDS = ANNOTATIONS | {"type", "properties", "required", "additionalProperties"}
PROPERTY_KEYWORDS = ANNOTATIONS | {"type"}
EXACT_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "null": (type(None),), "array": (list,), "object": (dict,)}
"""Python types whose values certainly are of each JSON type (a bool is an ``int`` subclass, never
an exact one)."""


def quick_check(schema: Mapping[str, Any]) -> QuickCheck | None:
    """A check that passes only arguments ``schema`` certainly accepts, or None when ``schema`` is
    not plain: no ``$schema`` (so the latest draft), an object of named properties, each of simple
    type, with ``required`` names and ``additionalProperties`` true or false at most."""
    if not OBJECT_KEYWORDS.issuperset(schema) or schema.get("type", "object") != "object":
        return None
    properties, required = schema.get("properties", {}), schema.get("required", [])
    closed = schema.get("additionalProperties", True)
    if (not isinstance(properties, dict) or not isinstance(required, list)
            or not all(isinstance(name, str) for name in required) or not isinstance(closed, bool)):
        return None
    types: dict[str, tuple[type, ...] | None] = {}
    for name, property_schema in properties.items():
        if not isinstance(property_schema, dict) or not PROPERTY_KEYWORDS.issuperset(property_schema):
            return None
        exact = _exact_types(property_schema.get("type"))
        if exact == ():
            return None
        types[name] = exact
    return _compiled(types, frozenset(required), open_ended=closed)


def _exact_types(declared: Any) -> tuple[type, ...] | None:
    """The exact Python types of a property's ``type`` (None: any value; empty: not plain)."""
    if declared is None:
        return None
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not names or not all(name in EXACT_TYPES for name in names):
        return ()
    return tuple(kind for name in names for kind in EXACT_TYPES[name])


def _compiled(types: dict[str, tuple[type, ...] | None], required: frozenset[str], *,
              open_ended: bool) -> QuickCheck:
    known = frozenset(types)

    def check(arguments: Mapping[str, Any]) -> bool:
        if not required.issubset(arguments) or (not open_ended and not known.issuperset(arguments)):
            return False
        for name, value in arguments.items():
            exact = types.get(name)
            if exact is not None and type(value) not in exact:
                return False
        return True

    return check
