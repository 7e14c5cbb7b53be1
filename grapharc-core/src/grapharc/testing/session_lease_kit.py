"""The lease half of the ``SessionStore`` contract: a live lease refuses other claims, an expired
one is recovered, renewal, racing claims, and a runner that lost its lease writes nothing.

``SessionStoreConformance`` (``grapharc.testing.session_store_kit``) includes these tests; a store
subclasses that, not this.
"""

from __future__ import annotations

import pytest

from grapharc.session.approvals import request
from grapharc.session.audit import NodeRun
from grapharc.session.contracts import SessionStore
from grapharc.session.errors import LeaseLostError, SessionBusyError, SessionError
from grapharc.session.records import COMPLETED, FAILED, RUNNING
from grapharc.testing.sessions import GRAPH, RACERS, TTL, claim, make_hold
from grapharc.testing.store_kit import StoreKit, race


class SessionLeaseConformance(StoreKit[SessionStore]):
    """The lease half of the ``SessionStore`` contract as pytest tests."""

    def test_a_live_lease_refuses_every_other_claim(self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 1.0)
        lease = claim(store, "t1", 2.0)
        with pytest.raises(SessionBusyError, match="runner-a"):
            claim(store, "t1", 3.0, runner="runner-b")
        with pytest.raises(SessionBusyError, match="runner-a"):
            store.claim_recovery("t1", runner="runner-b", ttl=TTL, now=3.0)
        assert store.get("t1").runner == "runner-a" and store.holds(lease)

    def test_an_expired_lease_is_recovered_not_restarted(self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 1.0)
        lease = claim(store, "t1", 0.0)
        with pytest.raises(SessionBusyError, match="left running by runner runner-a"):
            claim(store, "t1", TTL + 1, runner="runner-b")
        taken = store.claim_recovery("t1", runner="runner-b", ttl=TTL, now=TTL + 1)
        assert taken.turn == lease.turn and taken.token != lease.token
        assert store.get("t1").runner == "runner-b"

    def test_renewal_keeps_a_lease_alive_past_its_first_expiry(self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 0.0)
        lease = claim(store, "t1", 0.0)
        assert store.renew(lease, 8.0)
        assert store.get("t1").lease_expires_at == 8.0 + TTL
        with pytest.raises(SessionBusyError):
            store.claim_recovery("t1", runner="runner-b", ttl=TTL, now=15.0)
        store.claim_recovery("t1", runner="runner-b", ttl=TTL, now=19.0)

    def test_of_concurrent_start_claims_exactly_one_wins(self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 1.0)
        won, refused = race(RACERS, lambda i: claim(store, "t1", 2.0, runner=f"runner-{i}"), SessionError)
        assert len(won) == 1 and len(refused) == RACERS - 1
        assert all(isinstance(exc, SessionBusyError) for exc in refused)
        assert store.get("t1").runner == won[0].runner and store.holds(won[0])

    def test_of_concurrent_recoveries_exactly_one_wins(self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 0.0)
        claim(store, "t1", 0.0)
        won, refused = race(RACERS, lambda i: store.claim_recovery(
            "t1", runner=f"runner-{i}", ttl=TTL, now=TTL + 1), SessionError)
        assert len(won) == 1 and all(isinstance(exc, SessionBusyError) for exc in refused)
        assert len(refused) == RACERS - 1
        assert [e.kind for e in store.audit("t1")].count("reclaimed") == 1

    def test_a_runner_that_lost_its_lease_cannot_finish_record_or_renew(self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 0.0)
        stale = claim(store, "t1", 0.0)
        current = store.claim_recovery("t1", runner="runner-b", ttl=TTL, now=TTL + 1)
        assert not store.holds(stale) and store.holds(current)
        assert not store.renew(stale, TTL + 2)
        with pytest.raises(LeaseLostError, match="runner-a"):
            store.record_nodes(stale, [NodeRun(1, "n", "task-1", ())], 1, TTL + 2)
        with pytest.raises(LeaseLostError, match="runner-a"):
            store.finish(stale, COMPLETED, TTL + 2, requests=[request(make_hold(), "t1", TTL + 2)])
        now = store.get("t1")
        assert (now.status, now.runner, now.holds, now.last_node) == (RUNNING, "runner-b", (), None)
        assert store.approvals("t1") == [] and store.audited_step("t1") == -1
        store.finish(current, COMPLETED, TTL + 3)
        assert store.get("t1").status == COMPLETED

    def test_a_finished_turns_lease_is_released(self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 0.0)
        lease = claim(store, "t1", 1.0)
        store.finish(lease, COMPLETED, 2.0)
        assert not store.holds(lease) and not store.renew(lease, 3.0)
        with pytest.raises(LeaseLostError):
            store.finish(lease, FAILED, 3.0, error="late")
        assert store.get("t1").status == COMPLETED
