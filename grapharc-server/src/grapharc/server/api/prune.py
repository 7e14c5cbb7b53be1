"""``threads.prune``: remove threads, or keep each with its latest checkpoints only, as LangGraph's
server does (``POST /threads/prune`` answers ``{"pruned_count": n}``).

All or nothing: every thread named is checked before any is pruned, and one that has a run pending
or in flight, is being run, or waits on an approval refuses the whole request (409 naming it).
Unknown ids are skipped and not counted, as LangGraph skips them; with an auth file an id the
caller cannot read is a 404 and one they may read but not delete a 403 (``threads.delete``'s
rule), nothing pruned, as LangGraph refuses a prune naming a thread its caller may not delete.
``keep_latest`` is written on each thread's trail (``pruned``: who, how many checkpoints went);
``delete`` removes a thread's trail with it, as ``DELETE /threads/{id}`` does, so both are also
announced on the server's stderr with who asked and which threads.
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from grapharc.server.api.context import ApiContext, api
from grapharc.server.api.guards import Caller, asker, refuse_running, require_delete
from grapharc.server.auth import User
from grapharc.server.notices import notice
from grapharc.server.service import access
from grapharc.session.errors import UnknownSessionError
from grapharc.session.records import Session
from grapharc.stores import offload

router = APIRouter(prefix="/threads", tags=["threads"])
Context = Annotated[ApiContext, Depends(api)]


class ThreadPrune(BaseModel):
    """POST /threads/prune: the threads to prune and how (``delete`` unless ``keep_latest``)."""

    model_config = ConfigDict(extra="forbid")
    thread_ids: list[Annotated[str, Field(min_length=1, max_length=128)]] = Field(max_length=1000)
    strategy: Literal["delete", "keep_latest"] = "delete"


@router.post("/prune")
async def prune_threads(body: ThreadPrune, ctx: Context, user: Caller) -> dict[str, int]:
    """Prune the named threads (each one the caller may delete, none with a run pending or in
    flight): ``delete`` removes them, ``keep_latest`` keeps their latest checkpoint only; how many."""
    named = list(dict.fromkeys(body.thread_ids))
    chosen = [s.thread_id for s in await offload.to_thread(_prunable, ctx, named, user)]
    for thread_id in chosen:
        await offload.to_thread(refuse_running, ctx, thread_id, "prune it")
    await offload.to_thread(partial(ctx.manager.prune_threads, chosen, body.strategy, by=asker(user)))
    if body.strategy == "delete":
        for thread_id in chosen:
            await offload.to_thread(ctx.runs.forget_live, thread_id)  # its runs' live logs go with it
    if chosen:
        notice(f"threads.prune ({body.strategy}) by {asker(user)}: {', '.join(chosen)}")
    return {"pruned_count": len(chosen)}


def _prunable(ctx: ApiContext, thread_ids: list[str], user: User | None) -> list[Session]:
    """The sessions of ``thread_ids`` there are; with an auth file, a 404 for one ``user`` cannot
    read (or that does not exist) and a 403 for one they may not delete."""
    found = []
    for thread_id in thread_ids:
        try:
            session = ctx.manager.get(thread_id)
        except UnknownSessionError:
            if user is None:
                continue
            raise
        if user is not None and not access.may_read(user, session):
            raise UnknownSessionError(thread_id)
        require_delete(user, session)
        found.append(session)
    return found
