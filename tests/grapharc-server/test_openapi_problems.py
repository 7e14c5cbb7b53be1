"""The OpenAPI document describes the answer to a request that does not validate as what the server
sends: a problem document, not FastAPI's own ``HTTPValidationError``."""

from __future__ import annotations

import httpx

from grapharc.server.api.problem_schema import Problem
from grapharc.server.api.problems import PROBLEM_TYPE


def test_every_422_the_document_describes_is_the_problem_document_the_server_sends(api_server: str) -> None:
    with httpx.Client(base_url=api_server, timeout=60) as client:
        document = client.get("/openapi.json").json()
        refused = client.post("/threads/search", json={"limit": "many"})
    described = [operation["responses"]["422"] for operations in document["paths"].values()
                 for operation in operations.values() if "422" in operation["responses"]]
    assert len(described) > 40
    assert all(answer["content"] == {PROBLEM_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}
               for answer in described)
    assert "HTTPValidationError" not in document["components"]["schemas"]
    assert refused.status_code == 422 and refused.headers["content-type"] == PROBLEM_TYPE
    sent = Problem.model_validate(refused.json())
    assert sent.errors and sent.errors[0].loc == ["body", "limit"]
