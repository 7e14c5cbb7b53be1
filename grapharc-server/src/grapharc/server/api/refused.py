"""LangGraph Platform routes this server answers with a reason rather than a bare 404 or 405.

Some would change a graph or an assistant (a request can only name a registered graph), or a record
that belongs to a thread's history: those answer 405 and say what to do instead. Others belong to
features this server does not have (the key-value store, crons): those answer 501. Either way
nothing is read or written. (A thread's state is edited by a checked write: ``state_writes``.)
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter

from grapharc.server.api.problems import ApiProblem


@dataclass(frozen=True)
class Refusal:
    """A route refused: its methods and path, the status it answers, why, and what to do instead
    (``allow``: the methods the path does take, for a 405's Allow header)."""

    methods: tuple[str, ...]
    path: str
    status: int
    detail: str
    hint: str
    allow: str = ""


REFUSALS = (
    Refusal(("POST",), "/assistants", 405,
            "assistants are the graphs the operator registers in Python (grapharc serve --registry); "
            "a request cannot create one",
            "POST /assistants/search lists the registered graphs"),
    Refusal(("PATCH", "DELETE"), "/assistants/{assistant_id}", 405,
            "assistants are the graphs the operator registers in Python; a request cannot change or "
            "delete one", "the operator changes the registry and restarts the server", allow="GET"),
    Refusal(("POST",), "/assistants/{assistant_id}/versions", 501,
            "assistants have no versions here: one per registered graph", "GET /assistants/{id} reads it"),
    Refusal(("GET", "PUT", "POST", "DELETE"), "/store/{rest:path}", 501,
            "this server keeps no LangGraph store; a graph's memory is reached by its nodes, not over HTTP",
            "see the README's memory section"),
    Refusal(("GET", "POST", "PATCH", "DELETE"), "/runs/crons{rest:path}", 501,
            "this server schedules no cron runs", "start runs from your own scheduler"),
    Refusal(("POST",), "/threads/{thread_id}/runs/crons", 501,
            "this server schedules no cron runs", "start runs from your own scheduler"),
)


def _answer(refusal: Refusal) -> Callable[[], Coroutine[Any, Any, None]]:
    async def refuse() -> None:
        headers = {"Allow": refusal.allow} if refusal.status == 405 else None
        raise ApiProblem(refusal.status, refusal.detail, hint=refusal.hint, headers=headers)

    return refuse


router = APIRouter(include_in_schema=False)
for _refusal in REFUSALS:
    router.add_api_route(_refusal.path, _answer(_refusal), methods=list(_refusal.methods))
