"""Assistants are the graphs the operator registered in Python; a request can only name one. Beside
reading and searching them, a client (LangGraph Studio, the SDK's ``get_schemas`` and ``get_graph``)
can read a graph's state model as JSON Schema and its nodes and edges."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field, PydanticUserError

from grapharc.server.api import shapes
from grapharc.server.api.context import ApiContext, api
from grapharc.server.api.run_config import config_schema, context_schema

router = APIRouter(prefix="/assistants", tags=["assistants"])
Context = Annotated[ApiContext, Depends(api)]


class AssistantCount(BaseModel):
    """POST /assistants/count: optionally by graph id, name or metadata (an assistant's is empty)."""

    model_config = ConfigDict(extra="forbid")
    graph_id: str | None = None
    name: str | None = None
    metadata: dict[str, Any] | None = None


class AssistantSearch(AssistantCount):
    """POST /assistants/search: as ``AssistantCount`` chooses, paged."""

    limit: int = Field(default=10, ge=1, le=1000)
    offset: int = Field(default=0, ge=0)


@router.get("/{assistant_id}")
def get_assistant(assistant_id: str, ctx: Context) -> dict[str, Any]:
    return shapes.assistant(ctx.manager.graphs.get(assistant_id).name)


@router.post("/search")
def search_assistants(body: AssistantSearch, ctx: Context) -> list[dict[str, Any]]:
    return _matching(body, ctx)[body.offset:body.offset + body.limit]


@router.post("/count")
def count_assistants(body: AssistantCount, ctx: Context) -> int:
    return len(_matching(body, ctx))


def _matching(body: AssistantCount, ctx: ApiContext) -> list[dict[str, Any]]:
    """The assistants ``body`` chooses, shaped."""
    shaped = [shapes.assistant(name) for name in ctx.graph_names()]
    return [a for a in shaped if body.graph_id in (None, a["graph_id"]) and body.name in (None, a["name"])
            and shapes.holds_metadata(a["metadata"], body.metadata)]


@router.get("/{assistant_id}/schemas")
def get_schemas(assistant_id: str, ctx: Context) -> dict[str, Any]:
    """The graph's state model as JSON Schema: what a run's input is checked against, what its state
    and output hold; and the config and context a run may set, as the graph declares them (null
    when it declares none), as is every schema of a model that has none (a field of a type JSON
    Schema cannot describe)."""
    graph = ctx.manager.graphs.get(assistant_id)
    try:
        schema: dict[str, Any] | None = graph.builder.state.model_json_schema()
    except PydanticUserError:
        schema = None
    return {"graph_id": graph.name, "input_schema": schema, "output_schema": schema, "state_schema": schema,
            "config_schema": config_schema(graph.builder), "context_schema": context_schema(graph.builder)}


@router.get("/{assistant_id}/graph")
def get_graph(assistant_id: str, ctx: Context, xray: bool | int = False) -> dict[str, Any]:
    """The graph's nodes and edges as LangGraph draws them (``xray``: subgraphs too, to that depth)."""
    compiled = ctx.manager.graphs.compiled(assistant_id, None)  # compiled once per graph, kept
    drawn: dict[str, Any] = compiled.inner.get_graph(xray=xray).to_json()
    return drawn


@router.get("/{assistant_id}/subgraphs")
@router.get("/{assistant_id}/subgraphs/{namespace}")
def get_subgraphs(assistant_id: str, ctx: Context, namespace: str | None = None,
                  recurse: bool = False) -> dict[str, Any]:
    """The graph's subgraphs (a node that is itself a compiled graph) by namespace, each with its
    schemas, as LangGraph's ``get_subgraphs`` finds them: those of ``namespace`` only if given,
    their own subgraphs too with ``recurse``. A graph with none answers an empty object."""
    compiled = ctx.manager.graphs.compiled(assistant_id, None)
    return {name: _schemas(name, subgraph)
            for name, subgraph in compiled.inner.get_subgraphs(namespace=namespace, recurse=recurse)}


def _schemas(name: str, graph: Any) -> dict[str, Any]:
    """A subgraph's schemas as the SDK reads them (null where JSON Schema cannot describe one)."""
    def schema(read: Any) -> dict[str, Any] | None:
        try:
            found: dict[str, Any] = read()
        except (PydanticUserError, TypeError, ValueError):
            return None
        return found

    input_schema = schema(graph.get_input_jsonschema)
    return {"graph_id": name, "input_schema": input_schema, "state_schema": input_schema,
            "output_schema": schema(graph.get_output_jsonschema), "config_schema": None,
            "context_schema": schema(graph.get_context_jsonschema)}
