"""The time-travel part of the ``SessionStore`` contract: a state edit under a lease (recorded, or
leaving the row as it was), a fork's claim from a past checkpoint, and a copy of a thread.

``SessionStoreConformance`` (``grapharc.testing.session_store_kit``) includes these tests; a store
subclasses that, not this.
"""

from __future__ import annotations

import pytest

from grapharc.session.audit import NodeRun
from grapharc.session.contracts import SessionStore
from grapharc.session.errors import (
    SessionBusyError,
    SessionExistsError,
    ThreadEndedError,
    ThreadPausedError,
)
from grapharc.session.records import COMPLETED, FAILED, FORK, OPEN, PAUSED, RUNNING, SUPERSEDED, AuditKind
from grapharc.testing.sessions import GRAPH, TTL, claim, make_hold, pause
from grapharc.testing.store_kit import StoreKit


def _completed(store: SessionStore, thread_id: str, now: float = 2.0, audited_step: int = 3) -> None:
    """Create ``thread_id`` and run a turn to its end, its audit scan at ``audited_step``."""
    store.create(thread_id, GRAPH, 1.0)
    lease = claim(store, thread_id, now)
    store.record_nodes(lease, [NodeRun(1, "draft", "task-1", ("text",))], audited_step, now)
    store.finish(lease, COMPLETED, now)


class SessionTimeTravelConformance(StoreKit[SessionStore]):
    """The time-travel part of the ``SessionStore`` contract as pytest tests."""

    def test_an_edit_refused_leaves_the_row_and_the_trail_as_they_were(self, store: SessionStore) -> None:
        _completed(store, "t1")
        before, trail = store.get("t1"), store.audit("t1")
        lease = store.claim_edit("t1", runner="editor", ttl=TTL, now=5.0)
        assert store.get("t1").status == RUNNING
        store.finish_edit(lease, 6.0, detail=None)
        assert store.get("t1") == before and store.audit("t1") == trail

    def test_an_edit_holds_the_lease_and_is_recorded_with_the_status_kept(self, store: SessionStore) -> None:
        _completed(store, "t1")
        lease = store.claim_edit("t1", runner="editor", ttl=TTL, now=5.0)
        with pytest.raises(SessionBusyError, match="editor"):
            claim(store, "t1", 5.5)
        store.finish_edit(lease, 6.0, detail={"by": "ana", "as_node": "draft"}, audited_step=1)
        after = store.get("t1")
        assert (after.status, after.runner, after.updated_at) == (COMPLETED, None, 6.0)
        assert store.audited_step("t1") == 1
        last = store.audit("t1")[-1]
        assert (last.kind, last.detail) == (AuditKind.UPDATED, {"by": "ana", "as_node": "draft"})

    def test_an_edit_of_a_paused_or_ended_thread_is_refused(self, store: SessionStore) -> None:
        pause(store, "paused", make_hold())
        store.create("failed", GRAPH, 1.0)
        store.finish(claim(store, "failed", 2.0), FAILED, 2.0, error="boom")
        with pytest.raises(ThreadPausedError, match="paused"):
            store.claim_edit("paused", runner="editor", ttl=TTL, now=20.0)
        with pytest.raises(ThreadEndedError, match="failed"):
            store.claim_edit("failed", runner="editor", ttl=TTL, now=20.0)
        assert (store.get("paused").status, store.get("failed").status) == (PAUSED, FAILED)

    def test_a_thread_paused_on_plain_interrupts_alone_is_edited_and_its_approvals_follow_the_edit(
            self, store: SessionStore) -> None:
        kept, gone = pause(store, "t1", make_hold("left"), make_hold("right"))
        with pytest.raises(ThreadPausedError, match=kept.approval_id):  # one of them is not plain
            store.claim_edit("t1", runner="editor", ttl=TTL, now=20.0, plain={gone.approval_id})
        lease = store.claim_edit("t1", runner="editor", ttl=TTL, now=20.0,
                                 plain={kept.approval_id, gone.approval_id})
        store.finish_edit(lease, 21.0, detail={"by": "ana"}, status=PAUSED,
                          carried={kept.hold_key: "key-left-2"})
        assert store.get("t1").status == PAUSED
        assert (store.approval(kept.approval_id).state, store.approval(kept.approval_id).hold_key) == (
            OPEN, "key-left-2")
        assert store.approval(gone.approval_id).state == SUPERSEDED
        last = store.audit("t1")[-1]
        assert (last.kind, last.detail) == (AuditKind.UPDATED,
                                            {"by": "ana", "superseded": [gone.approval_id]})

    def test_a_copy_of_a_thread_paused_on_plain_interrupts_asks_them_again_on_the_copy(
            self, store: SessionStore) -> None:
        [asked] = pause(store, "source", make_hold())
        store.copy("source", "copy", 20.0, by="ana", plain={asked.approval_id})
        [again] = store.approvals("copy")
        assert (store.get("copy").status, again.state, again.created_at) == (PAUSED, OPEN, 20.0)
        assert again.approval_id != asked.approval_id
        assert (again.hold_key, again.question) == (asked.hold_key, asked.question)
        assert (again.digest, again.node) == (asked.digest, asked.node)
        assert [e.kind for e in store.audit("copy")] == [AuditKind.COPIED, AuditKind.ASKED]
        assert store.approval(asked.approval_id).state == OPEN  # the source still waits on its own

    def test_a_fork_supersedes_the_open_approvals_and_says_from_where(self, store: SessionStore) -> None:
        [asked] = pause(store, "t1", make_hold())
        lease = store.claim_fork("t1", runner="runner-b", ttl=TTL, now=20.0, checkpoint_id="cp-1", step=0,
                                 input=None, by="ana")
        assert (lease.turn["kind"], lease.turn["checkpoint_id"], lease.turn["input"]) == (FORK, "cp-1", None)
        assert store.approval(asked.approval_id).state == SUPERSEDED
        assert store.get("t1").status == RUNNING and store.audited_step("t1") <= 0
        last = store.audit("t1")[-1]
        assert (last.kind, last.detail) == (AuditKind.CLAIMED, {
            "runner": "runner-b", "turn": FORK, "checkpoint_id": "cp-1", "by": "ana",
            "superseded": [asked.approval_id]})

    def test_a_copy_has_the_sessions_graph_status_and_watermark_and_a_trail_of_its_own(
            self, store: SessionStore) -> None:
        _completed(store, "source")
        store.copy("source", "copy", 9.0, by="ana", owner="ana", tenant="east")
        made = store.get("copy")
        assert (made.graph, made.status, made.owner, made.tenant, made.created_at) == (
            GRAPH, COMPLETED, "ana", "east", 9.0)
        assert store.audited_step("copy") == store.audited_step("source") == 3
        copied = {"from": "source", "graph": GRAPH, "by": "ana", "owner": "ana", "tenant": "east"}
        assert [(e.kind, e.detail) for e in store.audit("copy")] == [(AuditKind.COPIED, copied)]
        with pytest.raises(SessionExistsError, match="copy"):
            store.copy("source", "copy", 10.0, by="ana")
        pause(store, "paused", make_hold())
        with pytest.raises(ThreadPausedError):
            store.copy("paused", "copy-2", 10.0, by="ana")
