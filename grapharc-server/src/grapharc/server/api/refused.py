"""LangGraph Platform routes this server answers with a reason rather than a bare 404 or 405.

They belong to features this server does not have (crons): those answer 501 and say what to do
instead, and nothing is read or written. (A thread's state is edited by a checked write,
``state_writes``; an assistant is a registered graph with a configuration it declares,
``assistant_writes``.)
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter

from grapharc.server.api.problems import ApiProblem


@dataclass(frozen=True)
class Refusal:
    """A route refused: its methods and path, the status it answers, why, and what to do instead."""

    methods: tuple[str, ...]
    path: str
    status: int
    detail: str
    hint: str


REFUSALS = (
    Refusal(("GET", "POST", "PATCH", "DELETE"), "/runs/crons{rest:path}", 501,
            "this server schedules no cron runs", "start runs from your own scheduler"),
    Refusal(("POST",), "/threads/{thread_id}/runs/crons", 501,
            "this server schedules no cron runs", "start runs from your own scheduler"),
)


def _answer(refusal: Refusal) -> Callable[[], Coroutine[Any, Any, None]]:
    async def refuse() -> None:
        raise ApiProblem(refusal.status, refusal.detail, hint=refusal.hint)

    return refuse


router = APIRouter(include_in_schema=False)
for _refusal in REFUSALS:
    router.add_api_route(_refusal.path, _answer(_refusal), methods=list(_refusal.methods))
