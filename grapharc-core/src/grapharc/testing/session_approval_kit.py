"""The approval half of the ``SessionStore`` contract: a pause opens its holds, a decision is made
once, the last one resumes the thread, and stale, foreign, unnamed, expired and rejected ones.

``SessionStoreConformance`` (``grapharc.testing.session_store_kit``) includes these tests; a store
subclasses that, not this.
"""

from __future__ import annotations

import pytest

from grapharc.session import records
from grapharc.session.approvals import Hold
from grapharc.session.contracts import SessionStore
from grapharc.session.errors import (
    AlreadyDecidedError,
    ApprovalExpiredError,
    ApprovalMismatchError,
    DeciderNotAllowedError,
    SessionError,
    StaleApprovalError,
    ThreadNotPausedError,
)
from grapharc.session.lease import Lease
from grapharc.session.records import Approval, AuditKind, decision_mark
from grapharc.testing.sessions import RACERS, TTL, make_hold, pause
from grapharc.testing.store_kit import StoreKit, race


class SessionApprovalConformance(StoreKit[SessionStore]):
    """The approval half of the ``SessionStore`` contract as pytest tests."""

    def decide(self, store: SessionStore, approval: Approval, decision: str = records.APPROVED, *,
               current: Hold | None, decider: str = "ana", now: float = 20.0,
               thread_id: str | None = None) -> Lease | None:
        """``store.decide`` with the kit's defaults, as runner ``runner-b``."""
        return store.decide(thread_id or approval.thread_id, approval.approval_id, decision, decider=decider,
                            now=now, current=current, runner="runner-b", ttl=TTL)


    def test_a_pause_opens_its_requests_as_the_threads_holds(self, store: SessionStore) -> None:
        asked = pause(store, "t1", make_hold("a"), make_hold("b", who=("ana", "bo")))
        paused = store.get("t1")
        assert paused.status == records.PAUSED and paused.runner is None
        assert list(paused.holds) == asked == store.approvals("t1")
        assert store.approval(asked[1].approval_id) == asked[1]
        assert asked[1].deciders == ("ana", "bo") and asked[1].state == records.OPEN

    def test_deciding_the_last_open_hold_hands_out_a_lease(self, store: SessionStore) -> None:
        first, second = pause(store, "t1", make_hold("a"), make_hold("b"))
        assert self.decide(store, first, current=make_hold("a")) is None
        assert store.get("t1").status == records.PAUSED and [h.node for h in store.get("t1").holds] == ["b"]
        decided = store.approval(first.approval_id)
        assert (decided.state, decided.decided_by, decided.decided_at) == (records.APPROVED, "ana", 20.0)
        lease = self.decide(store, second, records.DECLINED, current=make_hold("b"), now=21.0)
        assert lease is not None and lease.runner == "runner-b" and store.holds(lease)
        assert lease.turn["kind"] == "continue"
        resumed = store.get("t1")
        assert (resumed.status, resumed.runner, resumed.holds) == (records.RUNNING, "runner-b", ())
        assert store.approval(second.approval_id).state == records.DECLINED

    def test_an_approval_is_decided_once(self, store: SessionStore) -> None:
        first, second = pause(store, "t1", make_hold("a"), make_hold("b"))
        self.decide(store, first, current=make_hold("a"))
        with pytest.raises(AlreadyDecidedError, match="already approved by ana"):
            self.decide(store, first, records.DECLINED, current=make_hold("a"), decider="bo")
        self.decide(store, second, current=make_hold("b"))
        with pytest.raises(ThreadNotPausedError, match="already approved by ana"):
            self.decide(store, second, records.DECLINED, current=make_hold("b"), decider="bo")
        assert [a.state for a in store.approvals("t1")] == [records.APPROVED, records.APPROVED]

    def test_of_concurrent_decisions_on_the_last_hold_exactly_one_resumes(self, store: SessionStore) -> None:
        [asked] = pause(store, "t1", make_hold())
        won, refused = race(RACERS, lambda i: self.decide(store, asked, current=make_hold(),
                                                          decider=f"person-{i}"), SessionError)
        assert len(won) == 1 and won[0] is not None and store.holds(won[0])
        assert len(refused) == RACERS - 1
        assert all(isinstance(exc, ThreadNotPausedError | AlreadyDecidedError) for exc in refused)
        assert [e.kind for e in store.audit("t1")].count(AuditKind.DECIDED) == 1

    def test_a_stale_approval_is_superseded_and_asked_again(self, store: SessionStore) -> None:
        [asked] = pause(store, "t1", make_hold(digest="before"))
        changed = make_hold(digest="after")
        with pytest.raises(StaleApprovalError, match=asked.approval_id):
            self.decide(store, asked, current=changed)
        old, fresh = store.approvals("t1")
        assert old.state == records.SUPERSEDED and old.decided_by is None
        assert (fresh.state, fresh.digest, fresh.hold_key) == (records.OPEN, "after", changed.key)
        assert store.get("t1").status == records.PAUSED and store.get("t1").holds == (fresh,)
        with pytest.raises(StaleApprovalError):
            self.decide(store, old, current=changed)
        assert self.decide(store, fresh, current=changed) is not None

    def test_an_approval_whose_hold_is_gone_is_superseded_without_a_new_one(
            self, store: SessionStore) -> None:
        [asked] = pause(store, "t1", make_hold())
        with pytest.raises(StaleApprovalError):
            self.decide(store, asked, current=None)
        assert [a.state for a in store.approvals("t1")] == [records.SUPERSEDED]

    def test_an_approval_cannot_release_another_threads_hold(self, store: SessionStore) -> None:
        [mine] = pause(store, "mine", make_hold())
        [theirs] = pause(store, "theirs", make_hold())
        with pytest.raises(ApprovalMismatchError, match="belongs to thread mine"):
            self.decide(store, mine, current=make_hold(), thread_id="theirs")
        assert store.approval(mine.approval_id).state == records.OPEN
        assert store.approval(theirs.approval_id).state == records.OPEN
        assert store.get("theirs").status == records.PAUSED

    def test_a_decision_by_someone_not_named_or_by_no_one_is_refused(self, store: SessionStore) -> None:
        [asked] = pause(store, "t1", make_hold(who=("ana",)))
        for decider in ("bo", ""):
            with pytest.raises(DeciderNotAllowedError):
                self.decide(store, asked, current=make_hold(who=("ana",)), decider=decider)
        assert store.approval(asked.approval_id).state == records.OPEN

    def test_a_decision_other_than_approved_or_rejected_is_refused(self, store: SessionStore) -> None:
        [asked] = pause(store, "t1", make_hold())
        with pytest.raises(ApprovalMismatchError, match="maybe"):
            self.decide(store, asked, "maybe", current=make_hold())
        assert store.approval(asked.approval_id).state == records.OPEN

    def test_an_expired_approval_ends_the_thread_expired(self, store: SessionStore) -> None:
        late, other = pause(store, "t1", make_hold("a", ttl=5.0), make_hold("b"), now=10.0)
        with pytest.raises(ApprovalExpiredError, match=late.approval_id):
            self.decide(store, late, current=make_hold("a", ttl=5.0), now=15.0)
        assert store.get("t1").status == records.EXPIRED
        assert [store.approval(a.approval_id).state for a in (late, other)] == [records.LAPSED,
                                                                                 records.SUPERSEDED]

    def test_a_rejected_gate_ends_the_thread_rejected(self, store: SessionStore) -> None:
        gate = make_hold(kind=records.GATE)
        [asked] = pause(store, "t1", gate)
        assert self.decide(store, asked, records.DECLINED, current=gate) is None
        assert store.get("t1").status == records.REJECTED
        assert store.approval(asked.approval_id).state == records.DECLINED

    def test_decisions_are_listed_newest_first_and_paged_both_ways(self, store: SessionStore) -> None:
        asked = [pause(store, f"t{i}", make_hold("a"), make_hold("b"))[0] for i in range(5)]
        for i, approval in enumerate(asked[:4]):  # the fifth stays open
            self.decide(store, approval, records.DECLINED if i == 2 else records.APPROVED,
                        current=make_hold("a"), now=20.0 + (i // 2))  # two decisions at each time
        newest_first = sorted(asked[:4], key=lambda a: (20.0 + asked.index(a) // 2, a.approval_id),
                              reverse=True)
        listed = store.decided(10)
        assert [a.approval_id for a in listed] == [a.approval_id for a in newest_first]
        assert [(a.state, a.decided_by) for a in listed].count((records.DECLINED, "ana")) == 1
        first, second = store.decided(2), store.decided(2, before=decision_mark(listed[1]))
        assert first + second == listed and store.decided(2, before=decision_mark(listed[3])) == []
        assert store.decided(2, after=decision_mark(second[0])) == first
        assert store.decided(1, after=decision_mark(listed[3])) == [listed[2]]
        assert store.decided(0) == []

    def test_an_approval_decided_too_late_or_superseded_is_no_decision(self, store: SessionStore) -> None:
        [late] = pause(store, "late", make_hold(ttl=5.0))
        [stale] = pause(store, "stale", make_hold(digest="before"))
        with pytest.raises(ApprovalExpiredError):
            self.decide(store, late, current=make_hold(ttl=5.0), now=15.0)
        with pytest.raises(StaleApprovalError):
            self.decide(store, stale, current=make_hold(digest="after"))
        assert store.decided(10) == []
