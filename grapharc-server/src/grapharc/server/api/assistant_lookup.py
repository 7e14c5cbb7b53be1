"""Which assistant an id names: a registered graph's own (its id the graph's name, read-only), or
one created over the API from a registered graph (its id a UUID, kept in the assistant store).

A created assistant of a graph the caller may not run is, to them, one that does not exist (404,
the same message), as a thread they may not read is.
"""

from __future__ import annotations

import uuid

from grapharc.assistants.errors import UnknownAssistantError
from grapharc.assistants.records import Assistant
from grapharc.server.api.context import ApiContext
from grapharc.server.auth import User
from grapharc.server.service import access
from grapharc.session.registry import RegisteredGraph
from grapharc.stores import offload


def built_in(ctx: ApiContext, assistant_id: str) -> bool:
    """Whether ``assistant_id`` is a registered graph's name: that graph's own assistant."""
    return assistant_id in ctx.manager.graphs.names()


def created(ctx: ApiContext, assistant_id: str, user: User | None = None) -> Assistant:
    """The assistant created with ``assistant_id`` that ``user`` may see (404 otherwise)."""
    try:
        uuid.UUID(assistant_id)
    except ValueError:  # no created assistant has an id that is not a UUID
        raise UnknownAssistantError(assistant_id) from None
    found = ctx.assistants.get(assistant_id)
    if not access.may_run(user, found.graph_id):
        raise UnknownAssistantError(assistant_id)
    return found


def graph_of(ctx: ApiContext, assistant_id: str, user: User | None = None) -> RegisteredGraph:
    """The registered graph ``assistant_id`` runs: a graph's own name, or a created assistant's graph."""
    graph = assistant_id if built_in(ctx, assistant_id) else created(ctx, assistant_id, user).graph_id
    return ctx.manager.graphs.get(graph)


async def agraph_of(ctx: ApiContext, assistant_id: str, user: User | None = None) -> RegisteredGraph:
    """``graph_of`` for async code: the store is read, in a worker thread, only for a created assistant."""
    if built_in(ctx, assistant_id):
        return ctx.manager.graphs.get(assistant_id)
    return await offload.to_thread(graph_of, ctx, assistant_id, user)
