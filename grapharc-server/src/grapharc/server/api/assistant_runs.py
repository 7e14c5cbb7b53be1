"""A run of an assistant: the one call run creation makes where it looks its graph up.

A run names an assistant by id. A graph's own name runs that graph as the request says; a
created assistant's id runs its graph with its config and context beneath the run's
(``grapharc.server.api.assistant_config.beneath``), the version runs use read once, as the run is
queued, so the durable run keeps the config it was queued with. The run's ``metadata`` names the
assistant (``assistant_id``, set by the server as LangGraph's server sets it: a caller's is
overwritten), which is how a run of a created assistant shows its id while the run record keeps
its graph, by which workers claim runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, Self, TypeVar

from grapharc.server.api.assistant_config import beneath
from grapharc.server.api.assistant_lookup import built_in, created
from grapharc.server.api.context import ApiContext
from grapharc.server.api.run_config import RunConfig
from grapharc.server.auth import User
from grapharc.stores import offload


class RunBody(Protocol):
    """What of a run-starting body (``grapharc.server.api.runs.RunCreate``) names its assistant."""

    assistant_id: str
    config: RunConfig | None
    context: dict[str, Any] | None
    metadata: dict[str, Any] | None

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self: ...


Body = TypeVar("Body", bound=RunBody)


async def resolved(ctx: ApiContext, body: Body, user: User | None) -> Body:
    """``body`` naming its assistant's graph, with the assistant's config and context beneath its
    own and the assistant's id in its metadata; a graph's own name is kept (404 for an id that is
    neither a graph nor an assistant ``user`` may see). Only a created assistant is read from its
    store (in a worker thread): a run of a graph's own assistant costs no trip."""
    metadata = dict(body.metadata or {})
    if built_in(ctx, body.assistant_id):
        if "assistant_id" not in metadata:
            return body
        return body.model_copy(update={"metadata": {**metadata, "assistant_id": body.assistant_id}})
    assistant = await offload.to_thread(created, ctx, body.assistant_id, user)
    config, context = beneath(assistant.current, body.config, body.context)
    return body.model_copy(update={"assistant_id": assistant.graph_id, "config": config, "context": context,
                                   "metadata": {**metadata, "assistant_id": assistant.assistant_id}})
