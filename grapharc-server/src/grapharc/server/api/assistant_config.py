"""What an assistant may be configured with, checked as a run's config is, and how it lies beneath
a run's own.

An assistant's ``config`` and ``context`` are a run's (``grapharc.server.api.run_config``): only
the ``configurable`` keys its graph declares, a ``context`` that fits its ``context_schema``,
``tags`` and ``metadata``; they are checked by the same ``caller_config`` a run's are. Its
``recursion_limit`` may not exceed the server's iteration ceiling (``--max-iterations``), which
would bound every run of it anyway, and its config, context and metadata are each at most 64 KiB
of JSON. A run of the assistant starts from them: the run's ``configurable``, ``context`` and
``metadata`` keys override the assistant's key by key, its ``tags`` and ``recursion_limit``, if
given, replace the assistant's (LangGraph's server merges them so), and the result is checked
again as the run's config.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from grapharc.assistants.records import AssistantVersion
from grapharc.runtime.budget import Budget
from grapharc.server.api.metadata import check_size
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.run_config import RunConfig, caller_config
from grapharc.session.registry import RegisteredGraph

Name = Annotated[str, Field(min_length=1, max_length=200)]
Description = Annotated[str, Field(max_length=2000)]
GraphId = Annotated[str, Field(min_length=1, max_length=200)]


class AssistantCreate(BaseModel):
    """POST /assistants: a registered graph and the configuration it runs with (the SDK's ``create``)."""

    model_config = ConfigDict(extra="forbid")
    graph_id: GraphId
    assistant_id: str | None = Field(default=None, min_length=1, max_length=200)
    config: RunConfig | None = None
    context: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    if_exists: Literal["raise", "do_nothing"] = "raise"
    name: Name | None = None
    description: Description | None = None


class AssistantUpdate(BaseModel):
    """PATCH /assistants/{id}: what the next version changes (the SDK's ``update``); what it leaves
    out stays as it is, and its ``metadata`` is merged into the assistant's key by key."""

    model_config = ConfigDict(extra="forbid")
    graph_id: GraphId | None = None
    config: RunConfig | None = None
    context: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    name: Name | None = None
    description: Description | None = None


def checked(graph: RegisteredGraph, config: RunConfig | None, context: dict[str, Any] | None,
            metadata: dict[str, Any], ceiling: Budget) -> dict[str, Any]:
    """An assistant's config as it is kept (the fields the client set), once its config and context
    fit ``graph`` as a run's must, its recursion limit is within ``ceiling`` and each part is within
    its size; 422 naming what does not."""
    caller_config(graph.builder, config, context, whose="the assistant's")
    given = config.model_dump(exclude_unset=True) if config is not None else {}
    limit, most = given.get("recursion_limit"), ceiling.max_iterations
    if limit is not None and most is not None and limit > most:
        raise ApiProblem(422, f"the assistant's recursion_limit ({limit}) is above this server's ceiling "
                              f"of {most} iterations", hint=f"set at most {most}, or leave it out",
                         errors=[{"loc": ["body", "config", "recursion_limit"], "msg": f"at most {most}",
                                  "type": "less_than_equal"}])
    for part, value in (("config", given), ("context", context or {}), ("metadata", metadata)):
        check_size(value, f"an assistant's {part}")
    return given


def beneath(version: AssistantVersion, config: RunConfig | None,
            context: dict[str, Any] | None) -> tuple[RunConfig, dict[str, Any] | None]:
    """A run's config and context laid over the assistant ``version``'s, as LangGraph's server lays them."""
    own = RunConfig.model_validate(version.config)
    given = config.model_dump(exclude_unset=True) if config is not None else {}
    merged = RunConfig(configurable={**own.configurable, **given.get("configurable", {})},
                       recursion_limit=given.get("recursion_limit", own.recursion_limit),
                       tags=given.get("tags") or own.tags,
                       metadata={**own.metadata, **given.get("metadata", {})})
    if version.context is None and context is None:
        return merged, None
    return merged, {**(version.context or {}), **(context or {})}
