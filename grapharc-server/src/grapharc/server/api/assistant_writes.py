"""Creating, changing and deleting assistants over HTTP, as LangGraph's server offers them (the SDK's
``assistants.create``, ``update``, ``delete``, ``get_versions``, ``set_latest``).

An assistant is a registered graph plus a configuration that graph declares
(``grapharc.server.api.assistant_config``): a request still cannot describe a graph or a node. With
``--auth-file``, changing an assistant needs the grant to run its graph (each graph, when an
update moves it to another), and the store's change log records who changed which assistant and
the names of the keys each version sets. A graph's own assistant (its id the graph's name) is the
operator's and read-only: changing or deleting it is refused with 409 saying why. An assistant is
not deleted while a run of it is pending or running (409 naming them; LangGraph's server cancels
them instead): a governed run is not stopped as a side effect.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Response
from pydantic import BaseModel, ConfigDict, Field

from grapharc.assistants.errors import AssistantExistsError
from grapharc.assistants.records import Assistant, AssistantVersion
from grapharc.server.api import shapes
from grapharc.server.api.assistant_config import AssistantCreate, AssistantUpdate, checked
from grapharc.server.api.assistant_lookup import built_in, created
from grapharc.server.api.context import ApiContext, api
from grapharc.server.api.guards import Caller, asker, require_run
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.run_config import RunConfig
from grapharc.server.auth import User
from grapharc.server.service import access

router = APIRouter(prefix="/assistants", tags=["assistants"])
Context = Annotated[ApiContext, Depends(api)]
UNTITLED = "Untitled"
"""The name of an assistant created without one, as on LangGraph's server."""


class VersionSearch(BaseModel):
    """POST /assistants/{id}/versions: its versions whose metadata contains ``metadata``, paged."""

    model_config = ConfigDict(extra="forbid")
    metadata: dict[str, Any] | None = None
    limit: int = Field(default=10, ge=1, le=1000)
    offset: int = Field(default=0, ge=0)


class LatestVersion(BaseModel):
    """POST /assistants/{id}/latest: the version its runs use from now on."""

    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1, strict=True)


@router.post("")
def create_assistant(body: AssistantCreate, ctx: Context, user: Caller) -> dict[str, Any]:
    """Create an assistant over a registered graph, its config, context and metadata checked as a
    run's would be: its first version (``if_exists: do_nothing`` answers one already there)."""
    graph = ctx.manager.graphs.get(body.graph_id)
    require_run(user, graph.name)
    metadata = body.metadata or {}
    config = checked(graph, body.config, body.context, metadata, ctx.ceiling)
    first = AssistantVersion(_new_id(ctx, body.assistant_id), 1, graph.name, config, body.context, metadata,
                             body.name or UNTITLED, body.description, ctx.manager.clock(), asker(user))
    made, new = ctx.assistants.create(first, if_exists=body.if_exists)
    if not new and not access.may_run(user, made.graph_id):
        raise AssistantExistsError(made.assistant_id)  # theirs to see only if they may run its graph
    return shapes.created_assistant(made)


@router.patch("/{assistant_id}")
def update_assistant(assistant_id: str, body: AssistantUpdate, ctx: Context, user: Caller) -> dict[str, Any]:
    """A new version of the assistant, made from the one its runs use with what ``body`` changes,
    and used by its runs from now on."""
    _read_only(ctx, assistant_id, "changed")
    created(ctx, assistant_id, user)

    def revise(current: Assistant) -> AssistantVersion:
        return _revised(ctx, current.current, body, user)

    return shapes.created_assistant(ctx.assistants.update(assistant_id, revise))


@router.delete("/{assistant_id}", status_code=204)
def delete_assistant(assistant_id: str, ctx: Context, user: Caller, delete_threads: bool = False) -> Response:
    """Delete an assistant created over the API (a graph's own cannot be; 409 while a run of it
    is pending or running); its threads stay, as they belong to the graph."""
    _read_only(ctx, assistant_id, "deleted")
    if delete_threads:
        raise ApiProblem(422, "delete_threads is not offered: a thread belongs to its graph, not to an "
                              "assistant, so deleting an assistant never deletes threads",
                         hint="delete the threads themselves: DELETE /threads/{thread_id}")
    require_run(user, created(ctx, assistant_id, user).graph_id)
    in_flight = [run for run in ctx.runs.unended() if run.metadata.get("assistant_id") == assistant_id]
    if in_flight:
        named = ", ".join(f"{run.run_id} (thread {run.thread_id}, {run.status})" for run in in_flight)
        raise ApiProblem(409, f"assistant {assistant_id} has runs pending or running: {named}",
                         hint="wait for them to end, or cancel them (POST /threads/{id}/runs/{run}/cancel)")
    ctx.assistants.delete(assistant_id, by=asker(user), at=ctx.manager.clock())
    return Response(status_code=204)


@router.post("/{assistant_id}/versions")
def list_versions(assistant_id: str, body: VersionSearch, ctx: Context, user: Caller) -> list[dict[str, Any]]:
    """The assistant's versions, newest first (a graph's own assistant has one)."""
    if built_in(ctx, assistant_id):
        versions = [{k: v for k, v in shapes.assistant(assistant_id).items() if k != "updated_at"}]
    else:
        versions = [shapes.assistant_version(v)
                    for v in ctx.assistants.versions(created(ctx, assistant_id, user).assistant_id)]
    chosen = [v for v in versions if shapes.holds_metadata(v["metadata"], body.metadata)]
    return chosen[body.offset:body.offset + body.limit]


@router.post("/{assistant_id}/latest")
def set_latest(assistant_id: str, body: LatestVersion, ctx: Context, user: Caller) -> dict[str, Any]:
    """Make one of the assistant's versions the one its runs use from now on."""
    _read_only(ctx, assistant_id, "given another version")
    require_run(user, created(ctx, assistant_id, user).graph_id)
    chosen = ctx.assistants.set_latest(assistant_id, body.version, by=asker(user), at=ctx.manager.clock())
    return shapes.created_assistant(chosen)


def _revised(ctx: ApiContext, was: AssistantVersion, body: AssistantUpdate,
             user: User | None) -> AssistantVersion:
    """The next version of ``was``: what ``body`` changes, checked against its graph (the new one,
    if it moves), by ``user``, who must be allowed to run both graphs."""
    require_run(user, was.graph_id)
    graph = ctx.manager.graphs.get(body.graph_id or was.graph_id)
    require_run(user, graph.name)
    config = body.config if body.config is not None else RunConfig.model_validate(was.config)
    context = body.context if body.context is not None else was.context
    metadata = {**was.metadata, **(body.metadata or {})}
    kept = checked(graph, config, context, metadata, ctx.ceiling)
    description = body.description if body.description is not None else was.description
    return AssistantVersion(was.assistant_id, was.version, graph.name, kept, context, metadata,
                            body.name or was.name, description, ctx.manager.clock(), asker(user))


def _new_id(ctx: ApiContext, asked: str | None) -> str:
    """A new assistant's id: a fresh UUID, or the UUID the client chose (as LangGraph's server takes
    it), which may not be a registered graph's name."""
    if asked is None:
        return str(uuid.uuid4())
    try:
        return str(uuid.UUID(asked))
    except ValueError:
        raise ApiProblem(422, f"assistant_id {asked!r} is not a UUID", hint="leave it out to get a new one",
                         errors=[{"loc": ["body", "assistant_id"], "msg": "not a UUID",
                                  "type": "uuid_parsing"}]) from None


def _read_only(ctx: ApiContext, assistant_id: str, done: str) -> None:
    """409 for a graph's own assistant: the operator registers it, and only they change it."""
    if built_in(ctx, assistant_id):
        raise ApiProblem(409, f"assistant {assistant_id!r} is graph {assistant_id!r}'s own, registered by "
                              f"the operator: it cannot be {done} over the API",
                         hint=f"create an assistant from it (POST /assistants with graph_id "
                              f"{assistant_id!r}) and change that one")
