"""Claiming a thread for a turn on the event loop without a cancel stranding the claim.

A server's worker cancels a run's task wherever it awaits (``grapharc.session.cancels``). A turn
takes its thread's lease in a trip to a thread, and only once its driver runs does a cancel end the
turn where the thread stands. A cancel arriving in between (while the lease is taken, or the turn
built and settled) would leave the lease held with nobody to drive or release it: the thread stuck
``running`` until the lease ran out, then left for a recovery, the cancel lost on it. So the claim
and the building of the turn run shielded: a cancel arriving meanwhile waits for them, ends the
claimed turn as a cancel of a running one does (or, asked by nobody, as a stopping process's does:
failed, to be recovered), and goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from grapharc.session.settle import Plan
    from grapharc.session.turns import AsyncTurn

Built = tuple["AsyncTurn", "Plan"]
"""A claimed turn and its first plan."""


async def claimed(build: Awaitable[Built | None]) -> Built | None:
    """What ``build`` (the claim of a turn, its driver and first plan; None: nothing to claim)
    returns, shielded from a cancel of the awaiting task as the module says."""
    building = asyncio.ensure_future(build)
    try:
        return await asyncio.shield(building)
    except asyncio.CancelledError as cancel:
        try:
            built = await building
        except Exception:  # the claim was refused: nothing was taken
            raise cancel from None
        if built is not None:
            await built[0].stop(cancel)
        raise
