"""Assistants are the graphs the operator registered in Python; a request can only name one."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from grapharc.server.api import shapes
from grapharc.server.api.context import ApiContext, api

router = APIRouter(prefix="/assistants", tags=["assistants"])
Context = Annotated[ApiContext, Depends(api)]


class AssistantSearch(BaseModel):
    """POST /assistants/search: optionally by graph id, paged."""

    model_config = ConfigDict(extra="forbid")
    graph_id: str | None = None
    metadata: dict[str, Any] | None = None
    limit: int = Field(default=10, ge=1, le=1000)
    offset: int = Field(default=0, ge=0)


@router.get("/{assistant_id}")
def get_assistant(assistant_id: str, ctx: Context) -> dict[str, Any]:
    return shapes.assistant(ctx.manager.graphs.get(assistant_id).name)


@router.post("/search")
def search_assistants(body: AssistantSearch, ctx: Context) -> list[dict[str, Any]]:
    names = [n for n in ctx.graph_names() if body.graph_id is None or n == body.graph_id]
    return [shapes.assistant(n) for n in names[body.offset:body.offset + body.limit]]
