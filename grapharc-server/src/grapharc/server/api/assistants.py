"""Reading assistants: each registered graph's own (its id the graph's name) and those created
over the API from them (``grapharc.server.api.assistant_writes``). Beside reading and searching
them, a client (LangGraph Studio, the SDK's ``get_schemas`` and ``get_graph``) can read an
assistant's graph: its state model as JSON Schema, its nodes and edges. A created assistant of a
graph the caller may not run is not shown to them."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field, PydanticUserError

from grapharc.server.api import shapes
from grapharc.server.api.assistant_lookup import built_in, created, graph_of
from grapharc.server.api.context import ApiContext, api
from grapharc.server.api.guards import Caller
from grapharc.server.api.run_config import config_schema, context_schema
from grapharc.server.auth import User
from grapharc.server.service import access

router = APIRouter(prefix="/assistants", tags=["assistants"])
Context = Annotated[ApiContext, Depends(api)]


SortField = Literal["assistant_id", "graph_id", "name", "created_at", "updated_at"]
FIELDS = ("assistant_id", "graph_id", "name", "description", "config", "context", "metadata", "version",
          "created_at", "updated_at")


class AssistantCount(BaseModel):
    """POST /assistants/count: optionally by graph id, name (a part of it, in any case, as LangGraph
    matches it) or metadata (a graph's own assistant has none)."""

    model_config = ConfigDict(extra="forbid")
    graph_id: str | None = None
    name: str | None = None
    metadata: dict[str, Any] | None = None


class AssistantSearch(AssistantCount):
    """POST /assistants/search: as ``AssistantCount`` chooses, sorted (most recently created first,
    unless ``sort_by`` says; a graph's own assistants, created at the epoch, by name), paged, with
    only the ``select`` fields if given."""

    limit: int = Field(default=10, ge=1, le=1000)
    offset: int = Field(default=0, ge=0)
    sort_by: SortField | None = None
    sort_order: Literal["asc", "desc"] | None = None
    select: list[Literal[FIELDS]] | None = Field(default=None, min_length=1)  # type: ignore[valid-type]


@router.get("/{assistant_id}")
def get_assistant(assistant_id: str, ctx: Context, user: Caller) -> dict[str, Any]:
    """One assistant: a graph's own (its id is the graph's name) or one created over the API."""
    if built_in(ctx, assistant_id):
        return shapes.assistant(assistant_id)
    return shapes.created_assistant(created(ctx, assistant_id, user))


@router.post("/search")
def search_assistants(body: AssistantSearch, ctx: Context, user: Caller) -> list[dict[str, Any]]:
    """The assistants the caller may run (those created, newest first, then the graphs' own),
    filtered by graph, name and metadata, sorted and paged (``select`` keeps only those fields)."""
    found = _matching(body, ctx, user)
    if body.sort_by is not None:
        found.sort(key=lambda a: str(a[body.sort_by or ""]).lower(), reverse=body.sort_order != "asc")
    elif body.sort_order == "asc":
        found.reverse()
    page = found[body.offset:body.offset + body.limit]
    return page if body.select is None else [{key: a[key] for key in body.select} for a in page]


@router.post("/count")
def count_assistants(body: AssistantCount, ctx: Context, user: Caller) -> int:
    """How many assistants a search with the same filters finds."""
    return len(_matching(body, ctx, user))


def _matching(body: AssistantCount, ctx: ApiContext, user: User | None) -> list[dict[str, Any]]:
    """The assistants ``body`` chooses, shaped: those created (of graphs ``user`` may run), most
    recent first, then the graphs' own by name."""
    made = [shapes.created_assistant(a) for a in ctx.assistants.search(body.graph_id)
            if access.may_run(user, a.graph_id)]
    shaped = [*made, *(shapes.assistant(name) for name in ctx.graph_names())]
    name = (body.name or "").lower()
    return [a for a in shaped if body.graph_id in (None, a["graph_id"]) and name in a["name"].lower()
            and shapes.holds_metadata(a["metadata"], body.metadata)]


@router.get("/{assistant_id}/schemas")
def get_schemas(assistant_id: str, ctx: Context, user: Caller) -> dict[str, Any]:
    """The graph's state model as JSON Schema: what a run's input is checked against, what its state
    and output hold; and the config and context a run may set, as the graph declares them (null
    when it declares none), as is every schema of a model that has none (a field of a type JSON
    Schema cannot describe)."""
    graph = graph_of(ctx, assistant_id, user)
    try:
        schema: dict[str, Any] | None = graph.builder.state.model_json_schema()
    except PydanticUserError:
        schema = None
    return {"graph_id": graph.name, "input_schema": schema, "output_schema": schema, "state_schema": schema,
            "config_schema": config_schema(graph.builder), "context_schema": context_schema(graph.builder)}


@router.get("/{assistant_id}/graph")
def get_graph(assistant_id: str, ctx: Context, user: Caller, xray: bool | int = False) -> dict[str, Any]:
    """The graph's nodes and edges as LangGraph draws them (``xray``: subgraphs too, to that depth)."""
    graph = graph_of(ctx, assistant_id, user).name
    compiled = ctx.manager.graphs.compiled(graph, None)  # compiled once per graph, kept
    drawn: dict[str, Any] = compiled.inner.get_graph(xray=xray).to_json()
    return drawn


@router.get("/{assistant_id}/subgraphs")
@router.get("/{assistant_id}/subgraphs/{namespace}")
def get_subgraphs(assistant_id: str, ctx: Context, user: Caller, namespace: str | None = None,
                  recurse: bool = False) -> dict[str, Any]:
    """The graph's subgraphs (a node that is itself a compiled graph) by namespace, each with its
    schemas, as LangGraph's ``get_subgraphs`` finds them: those of ``namespace`` only if given,
    their own subgraphs too with ``recurse``. A graph with none answers an empty object."""
    compiled = ctx.manager.graphs.compiled(graph_of(ctx, assistant_id, user).name, None)
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
