"""The app's OpenAPI document says what a request that does not validate gets: a problem document.

FastAPI describes every 422 as its own ``HTTPValidationError`` (``{"detail": [...]}``), but this
server answers with an ``application/problem+json`` document (``grapharc.server.api.problems``),
so a client generated from ``/openapi.json``, and the docs site's HTTP reference, would read the
wrong body. FastAPI takes no other default for that answer, so the document is mended once, as
it is first built.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel, ConfigDict

from grapharc.server.api.problems import PROBLEM_TYPE

REF = "#/components/schemas/{model}"
FASTAPI_SCHEMAS = ("HTTPValidationError", "ValidationError")
"""The schemas FastAPI adds for its 422 answer, unused once that answer is described as it is."""


class FieldProblem(BaseModel):
    """One part of a request that did not validate: where (``loc``), what is wrong, its kind."""

    model_config = ConfigDict(extra="forbid")
    loc: list[str | int]
    msg: str
    type: str


class Problem(BaseModel):
    """An error answer (RFC 9457): its status, what went wrong (``detail``) and what to do
    (``hint``); for a request that did not validate, each field that did not (``errors``)."""

    model_config = ConfigDict(extra="forbid")
    type: str
    title: str
    status: int
    detail: str
    hint: str | None = None
    errors: list[FieldProblem] | None = None


def describe_problems(app: FastAPI) -> None:
    """Have ``app.openapi()`` describe every 422 answer as the problem document it is."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        fresh = app.openapi_schema is None
        document = build()
        if fresh:
            _mend(document)
        return document

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to change it


def _mend(document: dict[str, Any]) -> None:
    """Replace FastAPI's 422 body with the problem document in every operation of ``document``."""
    answer = {"description": "The request does not match what the route takes",
              "content": {PROBLEM_TYPE: {"schema": {"$ref": REF.format(model="Problem")}}}}
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            if "422" in operation.get("responses", {}):
                operation["responses"]["422"] = answer
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for name in FASTAPI_SCHEMAS:
        schemas.pop(name, None)
    schema = Problem.model_json_schema(ref_template=REF)
    schemas.update(schema.pop("$defs"))
    schemas["Problem"] = schema
