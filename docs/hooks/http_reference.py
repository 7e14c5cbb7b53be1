"""MkDocs hook: the HTTP API reference page, rendered from the server's own OpenAPI document.

The ``<!-- grapharc-http -->`` marker in a page is replaced by every operation the server
describes at ``/openapi.json`` (grouped by tag, in path order) with its summary, description,
parameters, request body and responses, then every schema those name with its fields. The
document comes from the FastAPI app ``grapharc serve`` builds, with every part mounted (a
registered-graphs API, the long-term store, the signed-in inbox) over empty stores in a
temporary folder: nothing listens. An operation without a summary or a description is a
warning naming it, so ``mkdocs build --strict`` fails until its route says what it does.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mkdocs.plugins import get_plugin_logger

from grapharc.memory.longterm import open_long_term_store
from grapharc.server import app as server_app
from grapharc.server.api.context import open_context
from grapharc.server.auth import AuthConfig
from grapharc.server.long_term import IN_PROCESS

MARKER = "<!-- grapharc-http -->"
METHODS = ("get", "post", "put", "patch", "delete")
"""The order a path's operations are listed in."""
UNTAGGED = "server"
"""The group of operations the document tags with nothing."""
REF = "#/components/schemas/"

log = get_plugin_logger(__name__)


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document of an app serving everything: the threads API, ``/store`` and the inbox."""
    with tempfile.TemporaryDirectory() as folder:
        sessions = str(Path(folder) / "sessions")
        context = open_context(sessions, [])
        store = open_long_term_store(IN_PROCESS)
        try:
            auth = AuthConfig(users={}, tokens={}, secret=secrets.token_urlsafe(32))  # signs nothing
            app = server_app.create_app(sessions=sessions, auth=auth, api=context, store=store)
            return app.openapi()
        finally:
            asyncio.run(context.aclose())
            store.close()


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(method, path, operation) of every operation of ``document``, paths sorted, methods in order."""
    for path in sorted(document["paths"]):
        for method in METHODS:
            if method in document["paths"][path]:
                yield method.upper(), path, document["paths"][path][method]


def undescribed(document: dict[str, Any]) -> list[str]:
    """``METHOD /path`` of each operation that lacks a summary or a description."""
    return [f"{method} {path}" for method, path, operation in operations(document)
            if not operation.get("summary", "").strip() or not operation.get("description", "").strip()]


# -- words for schemas -------------------------------------------------------------------------


def prose(text: str) -> str:
    """A docstring as Markdown: reStructuredText's double backticks made single."""
    return text.replace("``", "`").strip()


def cell(text: str) -> str:
    """``text`` fit for one table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def type_of(schema: dict[str, Any]) -> str:
    """A schema in a few words: a linked schema name, a type, ``a or b``, ``array of x``, ``one of ...``."""
    if "$ref" in schema:
        name = schema["$ref"].removeprefix(REF)
        return f"[`{name}`](#{name.lower()})"
    if "anyOf" in schema or "oneOf" in schema:
        return " or ".join(type_of(part) for part in schema.get("anyOf", schema.get("oneOf")))
    if "allOf" in schema:
        return " and ".join(type_of(part) for part in schema["allOf"])
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return "one of " + ", ".join(f"`{json.dumps(value)}`" for value in schema["enum"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {type_of(schema.get('items', {}))}"
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"object of {type_of(schema['additionalProperties'])}"
    return str(kind)


BOUNDS = (("minimum", "at least {}"), ("exclusiveMinimum", "above {}"), ("maximum", "at most {}"),
          ("exclusiveMaximum", "below {}"), ("minLength", "length at least {}"),
          ("maxLength", "length at most {}"), ("minItems", "at least {} items"),
          ("maxItems", "at most {} items"), ("pattern", "matching `{}`"))


def bounds(schema: dict[str, Any]) -> str:
    """The limits a schema (or any branch of it) sets, as words: ``at least 1, at most 1000``."""
    found = [words.format(schema[key]) for key, words in BOUNDS if key in schema]
    for part in schema.get("anyOf", []):
        found += [words.format(part[key]) for key, words in BOUNDS if key in part]
    return ", ".join(found)


def default_of(schema: dict[str, Any], required: bool) -> str:
    """What a field is when it is left out: required, its default, or none."""
    if required:
        return "required"
    return f"`{json.dumps(schema['default'])}`" if "default" in schema else "none"


def meaning(schema: dict[str, Any]) -> str:
    """A field's description and its limits, in one cell."""
    return cell("; ".join(part for part in (prose(schema.get("description", "")), bounds(schema)) if part))


# -- the page ----------------------------------------------------------------------------------


def parameters_table(parameters: list[dict[str, Any]]) -> list[str]:
    rows = ["| name | in | type | default | meaning |", "|---|---|---|---|---|"]
    for parameter in parameters:
        schema = {**parameter.get("schema", {}), "description": parameter.get("description", "")}
        rows.append(f"| `{parameter['name']}` | {parameter['in']} | {cell(type_of(schema))} | "
                    f"{default_of(schema, parameter.get('required', False))} | {meaning(schema)} |")
    return rows


def body_lines(body: dict[str, Any]) -> list[str]:
    """The request body: its media types and schema, and whether it may be left out."""
    needed = "required" if body.get("required") else "optional"
    return [f"- `{media}`: {type_of(content.get('schema', {}))} ({needed})"
            for media, content in body.get("content", {}).items()]


def responses_table(responses: dict[str, Any]) -> list[str]:
    rows = ["| status | meaning | body |", "|---|---|---|"]
    for status, response in sorted(responses.items()):
        bodies = [f"`{media}`: {type_of(content.get('schema', {}))}"
                  for media, content in response.get("content", {}).items()]
        shown = cell("; ".join(bodies)) or "none"
        rows.append(f"| {status} | {cell(response.get('description', ''))} | {shown} |")
    return rows


def operation_section(method: str, path: str, operation: dict[str, Any]) -> list[str]:
    lines = [f"### `{method} {path}`", "", f"**{operation.get('summary', '')}**", "",
             prose(operation.get("description", "")), ""]
    if operation.get("parameters"):
        lines += ["Parameters:", "", *parameters_table(operation["parameters"]), ""]
    if "requestBody" in operation:
        lines += ["Request body:", "", *body_lines(operation["requestBody"]), ""]
    lines += ["Responses:", "", *responses_table(operation.get("responses", {})), ""]
    return lines


def schema_section(name: str, schema: dict[str, Any]) -> list[str]:
    lines = [f"### `{name}`", ""]
    if schema.get("description"):
        lines += [prose(schema["description"]), ""]
    fields = schema.get("properties", {})
    if not fields:
        return [*lines, f"{type_of({k: v for k, v in schema.items() if k != 'description'})}.", ""]
    required = set(schema.get("required", []))
    lines += ["| field | type | default | meaning |", "|---|---|---|---|"]
    for field, spec in fields.items():
        lines.append(f"| `{field}` | {cell(type_of(spec))} | {default_of(spec, field in required)} | "
                     f"{meaning(spec)} |")
    if schema.get("additionalProperties") is False:
        lines += ["", "Any other field is refused."]
    return [*lines, ""]


def render(document: dict[str, Any]) -> str:
    """The operations of ``document`` grouped by tag (in the order tags first appear), then its schemas."""
    groups: dict[str, list[str]] = {}
    for method, path, operation in operations(document):
        for tag in operation.get("tags") or [UNTAGGED]:
            groups.setdefault(tag, []).extend(operation_section(method, path, operation))
    lines = []
    for tag in sorted(groups, key=lambda tag: tag != UNTAGGED):
        lines += [f"## {tag}", "", *groups[tag]]
    lines += ["## Schemas", ""]
    for name, schema in sorted(document.get("components", {}).get("schemas", {}).items()):
        lines += schema_section(name, schema)
    return "\n".join(lines)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace the marker, where a page has one, with the rendered API; warn of undescribed routes."""
    if MARKER not in markdown:
        return markdown
    document = openapi_document()
    for route in undescribed(document):
        log.warning("the HTTP API reference: %s has no summary or no description "
                    "(give its route function a docstring)", route)
    return markdown.replace(MARKER, render(document))
