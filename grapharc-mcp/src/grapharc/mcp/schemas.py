"""A server's input schemas: refused at connect when too deep or too large, then used to check
every call's arguments before the call is sent (with ``jsonschema``).

A schema is what the model is shown and what each call is validated against, so a hostile one
(nested thousands of levels, megabytes of text, ``$ref`` fan-out) could stall the model request
or the validator; these limits keep it small enough for both.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from jsonschema import exceptions as schema_errors
from jsonschema import validators

from grapharc.errors import GraphARCError

MAX_SCHEMA_DEPTH = 32
"""Nested objects and arrays a schema may hold, at most."""
MAX_SCHEMA_BYTES = 64 * 1024
"""A schema's size as JSON, at most."""
MAX_SCHEMA_NODES = 4000
"""Objects, arrays and values in a schema, at most."""
MAX_SCHEMA_REFS = 64
"""``$ref`` keywords in a schema, at most (each may fan a validation out)."""


class SchemaRefusedError(GraphARCError):
    """A tool's input schema GraphARC will not show a model or validate against."""


def _walk(value: Any, depth: int = 1) -> Iterator[tuple[Any, int]]:
    """Every object, array and value in ``value`` with its depth, stopping past the depth limit."""
    yield value, depth
    if depth > MAX_SCHEMA_DEPTH:
        return
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for child in children:
        yield from _walk(child, depth + 1)


def checked_validator(server: str, tool: str, schema: Any) -> Any:
    """A ``jsonschema`` validator of ``schema``, or ``SchemaRefusedError`` naming server and tool
    when it is not an object schema, or too deep or too large, or not a valid JSON Schema."""
    where = f"MCP server {server!r}, tool {tool!r}"
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise SchemaRefusedError(f"{where}: its input schema must be a JSON object schema")
    size = len(json.dumps(schema, default=str))
    if size > MAX_SCHEMA_BYTES:
        raise SchemaRefusedError(f"{where}: its input schema is {size} bytes of JSON, more than the "
                                 f"{MAX_SCHEMA_BYTES} allowed")
    nodes = refs = deepest = 0
    for node, depth in _walk(schema):
        nodes, deepest = nodes + 1, max(deepest, depth)
        refs += isinstance(node, dict) and "$ref" in node
        if depth > MAX_SCHEMA_DEPTH:
            raise SchemaRefusedError(f"{where}: its input schema nests more than {MAX_SCHEMA_DEPTH} levels")
        if nodes > MAX_SCHEMA_NODES:
            raise SchemaRefusedError(f"{where}: its input schema has more than {MAX_SCHEMA_NODES} parts")
    if refs > MAX_SCHEMA_REFS:
        raise SchemaRefusedError(f"{where}: its input schema has {refs} $ref keywords, more than "
                                 f"{MAX_SCHEMA_REFS}")
    validator_class = validators.validator_for(schema)
    try:
        validator_class.check_schema(schema)
    except schema_errors.SchemaError as exc:
        raise SchemaRefusedError(f"{where}: its input schema is not a valid JSON Schema: "
                                 f"{exc.message[:200]}") from None
    return validator_class(schema)


def problems(validator: Any, arguments: dict[str, Any], limit: int = 5) -> list[str]:
    """Up to ``limit`` reasons ``arguments`` do not fit the schema, each naming where."""
    found = []
    for error in validator.iter_errors(arguments):
        where = ".".join(str(part) for part in error.absolute_path) or "arguments"
        found.append(f"{where}: {error.message[:200]}")
        if len(found) == limit:
            break
    return found
