"""Steps on a session store that the session store kits take: a hold as a checkpoint would show
it, a claimed start turn, a thread paused on holds."""

from __future__ import annotations

from grapharc.session.approvals import Approvers, Hold, request
from grapharc.session.contracts import SessionStore
from grapharc.session.lease import Lease
from grapharc.session.records import INTERRUPT, PAUSED, Approval

GRAPH = "kit-graph"
TTL = 10.0
RACERS = 8


def make_hold(node: str = "review", *, kind: str = INTERRUPT, digest: str = "digest-1",
              who: tuple[str, ...] = (), ttl: float | None = None) -> Hold:
    """A hold on ``node`` as the session runtime would read it from a checkpoint."""
    return Hold(kind, node, f"key-{node}", f"may {node} go ahead?", digest, Approvers(frozenset(who), ttl))


def claim(store: SessionStore, thread_id: str, now: float, runner: str = "runner-a") -> Lease:
    """A start turn on ``thread_id`` with no input and no inbox."""
    return store.claim_start(thread_id, runner=runner, ttl=TTL, now=now, input={}, inbox=None)


def pause(store: SessionStore, thread_id: str, *holds: Hold, now: float = 10.0) -> list[Approval]:
    """Create ``thread_id``, run a turn and end it paused on ``holds``; their approval records."""
    store.create(thread_id, GRAPH, now)
    lease = claim(store, thread_id, now)
    requests = [request(hold, thread_id, now) for hold in holds]
    store.finish(lease, PAUSED, now, requests=requests)
    return requests
