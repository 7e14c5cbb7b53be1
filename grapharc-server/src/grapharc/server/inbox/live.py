"""The inbox's live list: Server-Sent Events telling a signed-in page which approvals wait for its user.

``/inbox/events`` sends a ``pending`` event at once and again whenever the set of approvals the
user may decide changes (an approval asked, decided or lapsed); the page's script
(``static/live.js``) then fetches the inbox again and puts its list in place, so a new approval
appears without a reload (and without the script the page works as before). Between reads the
stream waits for the session store's change notifications, the ones the API's streams wait on (a
write to any thread's audit trail: PostgreSQL's LISTEN/NOTIFY); a store that sends none (SQLite) is
read again every ``POLL_SECONDS``. A stream ends when its page session is signed out.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from fastapi import APIRouter, Request

from grapharc.server.api.streaming import HEARTBEAT_SECONDS
from grapharc.server.auth import User
from grapharc.server.event_stream import EventStream
from grapharc.server.inbox.routes import PREFIX, SessionsDep, Who, waiting_for
from grapharc.server.service.sessions import Sessions
from grapharc.stores import offload

POLL_SECONDS = 2.0
"""How long a stream waits for a change notification before reading the pending approvals again."""

router = APIRouter(prefix=PREFIX, include_in_schema=False)  # pages for a signed-in person, not the JSON API


@router.get("/events")
async def events(request: Request, who: Who, sessions: SessionsDep) -> EventStream:
    """The approvals waiting for the signed-in user, sent at once and each time they change."""
    return EventStream(_pending_events(request, who.session.nonce, who.user, sessions),
                       heartbeat=HEARTBEAT_SECONDS, headers={"Cache-Control": "no-store"})


async def _pending_events(request: Request, nonce: str, user: User,
                          sessions: Sessions) -> AsyncIterator[dict[str, str]]:
    """A ``pending`` event whenever the approvals ``user`` may decide change, until the page session
    ``nonce`` is signed out or the page goes away."""
    sent: list[str] | None = None
    records = sessions.sign_ins()
    while not await request.is_disconnected():
        _, mine = await waiting_for(user, sessions)
        ids = sorted(p.approval.approval_id for p in mine)
        if ids != sent:
            sent = ids
            yield {"event": "pending", "data": json.dumps({"count": len(ids), "approvals": ids})}
        await sessions.manager.wait_for_any_change(POLL_SECONDS)
        if await offload.to_thread(records.sign_in_revoked, nonce, sessions.manager.clock()):
            return
