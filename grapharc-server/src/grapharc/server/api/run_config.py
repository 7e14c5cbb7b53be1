"""A run request's ``config`` and ``context``, as the SDK and LangGraph's ``RemoteGraph`` send them.

``config`` carries ``configurable`` (only the keys the graph declares in its ``config_schema``;
``thread_id``, ``checkpoint_ns``, ``checkpoint_id`` and GraphARC's and LangGraph's own keys are
refused: the thread is the route's, a past checkpoint is not a run's to pick), ``recursion_limit``,
``tags`` and ``metadata``; ``context`` is checked against the graph's ``context_schema``. A key
that does not fit is refused with 422 naming it, before anything is stored
(``grapharc.runtime.caller_config``). ``recursion_limit`` only lowers LangGraph's superstep cap:
the run's iteration budget (the operator's ceiling, tightened by the request's ``budget``) still
bounds it, so the budget wins; a budget above the ceiling is refused (``grapharc.server.api.budgets``).

The checked config is kept in the run's durable request (``REQUEST_KEY``), so whichever worker
drives the run, or reclaims it after its worker died, runs it with the same config.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from grapharc.runtime.caller_config import CallerConfig
from grapharc.runtime.graph import GraphARC
from grapharc.server.api.problems import ApiProblem

REQUEST_KEY = "config"
"""Where a run's durable request keeps its caller's config (``CallerConfig.to_json``)."""


class RunConfig(BaseModel):
    """``config`` in a run request: what a caller may set of LangGraph's run config."""

    model_config = ConfigDict(extra="forbid")
    configurable: dict[str, Any] = Field(default_factory=dict)
    recursion_limit: Annotated[int, Field(gt=0, strict=True)] | None = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


def caller_config(graph: GraphARC, config: RunConfig | None, context: dict[str, Any] | None, *,
                  whose: str = "the run's") -> CallerConfig:
    """The run's config checked against ``graph``'s declarations (a request that sets none still
    has to fit a schema with required fields); 422 listing every key that does not fit, saying
    ``whose`` config it is (an assistant's is checked as a run's)."""
    given = config or RunConfig()
    caller = CallerConfig(configurable=given.configurable, context=context,
                          recursion_limit=given.recursion_limit, tags=tuple(given.tags),
                          metadata=given.metadata)
    errors = caller.problems(graph.config_schema, graph.context_schema)
    if errors:
        named = ", ".join(".".join(str(part) for part in e["loc"]) for e in errors)
        raise ApiProblem(422, f"{whose} config does not fit graph {graph.name!r}: {named}",
                         errors=errors, hint=_hint(graph))
    return caller


def _hint(graph: GraphARC) -> str:
    """What the graph takes, for a refused config."""
    keys = ", ".join(graph.config_schema.model_fields) if graph.config_schema is not None else "none"
    context = "a context" if graph.context_schema is not None else "no context"
    return (f"graph {graph.name!r} declares configurable keys: {keys}, and takes {context}; "
            "GET /assistants/{id}/schemas shows both")


def config_schema(graph: GraphARC) -> dict[str, Any] | None:
    """The JSON Schema of a run's ``config`` as LangGraph draws it (``configurable`` holding the
    declared keys); None when the graph declares none."""
    if graph.config_schema is None:
        return None
    config = create_model("Config", configurable=(graph.config_schema, None))
    return config.model_json_schema()


def context_schema(graph: GraphARC) -> dict[str, Any] | None:
    """The JSON Schema of a run's ``context``; None when the graph declares none."""
    return graph.context_schema.model_json_schema() if graph.context_schema is not None else None
