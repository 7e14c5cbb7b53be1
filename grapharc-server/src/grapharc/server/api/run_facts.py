"""What a run says about itself, as LangGraph's server says it: its attempt, who created it, the
arguments it was created with (``kwargs``) and the metadata keys its checkpoints, tokens and record
carry (``assistant_id``, ``graph_id``, ``run_attempt``, ``langgraph_version``, ``created_by``).

Only facts this server has are given: an assistant is its graph (so ``assistant_id`` is
``graph_id``), ``created_by`` is the signed-in user who asked (no user, no key: LangGraph's
``"system"`` names nobody here), and every turn saves its checkpoints before it goes on
(``durability`` ``sync``). The request's own arguments are kept in the run's durable request
(``KWARGS_KEY``) as they were given once checked, so a refused config key is never stored.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from grapharc.runs.records import DELETE, ON_COMPLETION, PENDING, RunRecord
from grapharc.runtime.caller_config import CallerConfig
from grapharc.server.api.run_config import REQUEST_KEY
from grapharc.stores.masking import masked

KWARGS_KEY = "kwargs"
"""Where a run's durable request keeps the arguments it was created with (besides its input and
config, which it keeps for its turn already)."""
CREATED_BY = "created_by"
"""Where a run's durable request keeps the signed-in user who created it."""
LANGGRAPH_VERSION = version("langgraph")
DURABILITY = "sync"
"""How a GraphARC turn saves its checkpoints: each before the next step runs."""


def attempt(run: RunRecord) -> int:
    """The run's attempt number: its claims so far (a reclaim after a worker's death is 2), or for a
    pending run the claim to come."""
    return run.attempts + 1 if run.status == PENDING else max(run.attempts, 1)


def assistant_of(run: RunRecord) -> str:
    """The assistant a run ran: a created assistant's id (the server sets it in the run's metadata),
    else its graph's own (the record's ``assistant_id``, what workers claim runs by)."""
    return str(run.metadata.get("assistant_id", run.assistant_id))


def server_metadata(run: RunRecord) -> dict[str, Any]:
    """The metadata keys LangGraph's server puts on a run's config (so on its checkpoints and its
    tokens' ``messages`` metadata) that hold here."""
    created_by = run.request.get(CREATED_BY)
    return {"assistant_id": assistant_of(run), "graph_id": run.assistant_id, "run_attempt": attempt(run),
            "langgraph_version": LANGGRAPH_VERSION, **({CREATED_BY: created_by} if created_by else {})}


def turn_caller(run: RunRecord) -> CallerConfig:
    """The caller's config the run's turn runs with: as the request kept it, with
    ``server_metadata`` over the caller's own metadata keys."""
    caller = CallerConfig.from_json(run.request.get(REQUEST_KEY)) or CallerConfig()
    return CallerConfig(configurable=caller.configurable, context=caller.context,
                        recursion_limit=caller.recursion_limit, tags=caller.tags,
                        metadata={**caller.metadata, **server_metadata(run)})


def kept_kwargs(body: Any) -> dict[str, Any]:
    """What of a run request (``runs.RunCreate``) its ``kwargs`` show that the turn's own request
    does not keep: the command, breakpoints and streaming options as given, and the webhook URL
    with any credentials in it masked."""
    command = body.command.model_dump(exclude_none=True) if body.command is not None else None
    return {"command": command, "interrupt_before": body.interrupt_before,
            "interrupt_after": body.interrupt_after, "subgraphs": body.stream_subgraphs,
            "resumable": body.stream_resumable,
            "webhook": None if body.webhook is None else masked(body.webhook)}


def kwargs(run: RunRecord) -> dict[str, Any]:
    """A run's ``kwargs`` as LangGraph's server shows them: its input, command, config (configurable
    keys, tags, metadata and recursion limit as the caller set them), context, stream modes,
    breakpoints and options (a run stored before these were kept shows what its request holds)."""
    request = run.request
    kept = request.get(KWARGS_KEY) or {}
    caller = request.get(REQUEST_KEY) or {}
    config = {"configurable": caller.get("configurable") or {}, "tags": caller.get("tags") or [],
              "metadata": caller.get("metadata") or {},
              **({"recursion_limit": caller["recursion_limit"]} if caller.get("recursion_limit") else {})}
    return {"input": request.get("input"), "command": kept.get("command"), "config": config,
            "context": caller.get("context") or {}, "stream_mode": list(run.stream_modes),
            "interrupt_before": kept.get("interrupt_before"), "interrupt_after": kept.get("interrupt_after"),
            "webhook": kept.get("webhook"),
            "feedback_keys": None, "temporary": request.get(ON_COMPLETION) == DELETE,
            "subgraphs": bool(kept.get("subgraphs")), "resumable": bool(kept.get("resumable")),
            "checkpoint_during": True, "durability": DURABILITY}


def record_metadata(run: RunRecord) -> dict[str, Any]:
    """A run record's metadata: the request's own, then the assistant, the graph and who created it."""
    created_by = run.request.get(CREATED_BY)
    return {**run.metadata, "assistant_id": assistant_of(run), "graph_id": run.assistant_id,
            **({CREATED_BY: created_by} if created_by else {})}
