"""A conformance kit for ``SessionStore`` implementations, ours or a third party's.

Subclass ``SessionStoreConformance`` in a class pytest collects (``Test...``) and
override ``make_store(tmp_path)``; every ``test_`` method here then runs against your
store. Set ``durable = True`` to also prove that sessions, approvals and leases survive
``close()`` and reopening; ``reopen_store(tmp_path)`` defaults to ``make_store(tmp_path)``.
Times are passed explicitly, so nothing here waits on a clock.

    class TestMySessionStore(SessionStoreConformance):
        durable = True

        def make_store(self, tmp_path):
            return open_store(f"mine:{tmp_path}", kind="sessions")
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from grapharc.session.approvals import request
from grapharc.session.audit import NodeRun
from grapharc.session.contracts import SessionStore, SignInRecords, graph_of
from grapharc.session.errors import (
    ApprovalExpiredError,
    LeaseLostError,
    NothingToRecoverError,
    SessionExistsError,
    SessionInputError,
    ThreadPausedError,
    UnknownApprovalError,
    UnknownSessionError,
)
from grapharc.session.records import (
    APPROVED,
    COMPLETED,
    CREATED,
    DECLINED,
    EXPIRED,
    FAILED,
    GATE,
    OPEN,
    PAUSED,
    REJECTED,
    RUNNING,
    AuditKind,
)
from grapharc.testing.session_approval_kit import SessionApprovalConformance
from grapharc.testing.session_lease_kit import SessionLeaseConformance
from grapharc.testing.session_time_travel_kit import SessionTimeTravelConformance
from grapharc.testing.sessions import GRAPH, TTL, claim, make_hold, pause


class SessionStoreConformance(SessionLeaseConformance, SessionApprovalConformance,
                              SessionTimeTravelConformance):
    """The ``SessionStore`` contract as pytest tests (leases, approvals and time travel from their kits);
    subclass it and implement ``make_store``."""

    # -- sessions and statuses -------------------------------------------------------

    def test_store_satisfies_the_session_store_protocol(self, store: SessionStore) -> None:
        assert isinstance(store, SessionStore)

    def test_a_new_session_reads_back_as_created(self, store: SessionStore) -> None:
        made = store.create("t1", GRAPH, 5.0)
        assert made == store.get("t1")
        assert (made.thread_id, made.graph, made.status) == ("t1", GRAPH, CREATED)
        assert (made.created_at, made.updated_at, made.runner, made.holds) == (5.0, 5.0, None, ())

    def test_a_taken_thread_id_is_refused_and_the_first_session_kept(self, store: SessionStore) -> None:
        first = store.create("t1", GRAPH, 5.0)
        with pytest.raises(SessionExistsError, match="t1"):
            store.create("t1", "other-graph", 6.0)
        assert store.get("t1") == first

    def test_unknown_thread_ids_raise_unknown_session_error_everywhere(self, store: SessionStore) -> None:
        calls: list[Callable[[], Any]] = [
            lambda: store.get("nope"), lambda: store.approvals("nope"), lambda: store.events("nope"),
            lambda: store.audit("nope"), lambda: store.audited_step("nope"),
            lambda: claim(store, "nope", 1.0),
            lambda: store.claim_recovery("nope", runner="r", ttl=TTL, now=1.0),
            lambda: store.post_event("nope", "note", {}, 1.0),
            lambda: store.update_metadata("nope", {"a": 1}, 1.0, by="ana"),
        ]
        for call in calls:
            with pytest.raises(UnknownSessionError, match="nope"):
                call()
        assert store.list() == []

    def test_a_thread_s_graph_reads_as_get_names_it_and_an_unknown_thread_is_refused(
            self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 5.0)
        assert graph_of(store, "t1") == store.get("t1").graph == GRAPH
        with pytest.raises(UnknownSessionError, match="nope"):
            graph_of(store, "nope")

    def test_unknown_approval_ids_raise_unknown_approval_error(self, store: SessionStore) -> None:
        [asked] = pause(store, "t1", make_hold())
        with pytest.raises(UnknownApprovalError, match="ap-missing"):
            store.approval("ap-missing")
        with pytest.raises(UnknownApprovalError, match="ap-missing"):
            store.decide("t1", "ap-missing", APPROVED, decider="ana", now=20.0, current=make_hold(),
                         runner="r", ttl=TTL)
        assert store.approval(asked.approval_id).state == OPEN

    @pytest.mark.parametrize("thread_id", ["it's \"quoted\"; DROP TABLE sessions; --", "東京/スレッド 1",
                                           "x" * 500, "100%_*", " padded "])
    def test_odd_thread_ids_round_trip_verbatim_and_match_only_themselves(
            self, store: SessionStore, thread_id: str) -> None:
        store.create(thread_id, GRAPH, 1.0)
        store.post_event(thread_id, "note", {"text": "東京"}, 2.0)
        assert store.get(thread_id).thread_id == thread_id
        assert [s.thread_id for s in store.list()] == [thread_id]
        assert store.events(thread_id)[0].payload == {"text": "東京"}
        for near in (thread_id.strip() + "?", thread_id[:-1], thread_id.upper() + "Z"):
            with pytest.raises(UnknownSessionError):
                store.get(near)

    def test_text_utf8_cannot_hold_is_refused_naming_it_and_nothing_is_written(
            self, store: SessionStore) -> None:
        """A lone surrogate (what bytes that were not UTF-8 decode to) in an id, a kind or a payload."""
        store.create("t1", GRAPH, 1.0)
        attempts: list[Callable[[], object]] = [
            lambda: store.create("a\ud800", GRAPH, 2.0), lambda: store.get("b\udced"),
            lambda: store.post_event("t1", "note\udcff", {}, 2.0),
            lambda: store.post_event("t1", "note", {"text": "\udc80"}, 2.0),
            lambda: store.post_event("t1", "note", {"\ud83d": "key"}, 2.0)]
        for attempt in attempts:
            with pytest.raises(SessionInputError, match="not text"):
                attempt()
        assert [s.thread_id for s in store.list()] == ["t1"] and store.events("t1") == []
        assert store.get("t1").status == CREATED
        store.post_event("t1", "note", {"text": "\U0001f600 東京"}, 3.0)  # whole characters are kept
        assert store.events("t1")[0].payload == {"text": "\U0001f600 東京"}

    def test_a_turn_goes_from_created_to_running_to_completed_and_may_run_again(
            self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 1.0)
        lease = claim(store, "t1", 2.0)
        running = store.get("t1")
        assert (running.status, running.runner, running.lease_expires_at) == (RUNNING, "runner-a", 2.0 + TTL)
        assert running.lease_live(3.0) and store.holds(lease)
        store.finish(lease, COMPLETED, 3.0, outcome="done")
        done = store.get("t1")
        assert (done.status, done.runner, done.outcome, done.updated_at) == (COMPLETED, None, "done", 3.0)
        again = claim(store, "t1", 4.0, runner="runner-b")
        assert store.get("t1").status == RUNNING and again.token != lease.token

    def test_a_turns_end_answers_the_session_as_get_reads_it_next(self, store: SessionStore) -> None:
        """``finish`` returns the session it leaves: completed with its last node, failed, cancelled,
        and paused on the approvals it opened (given as a generator: read once)."""
        store.create("t1", GRAPH, 1.0)
        lease = claim(store, "t1", 2.0)
        store.record_nodes(lease, [NodeRun(1, "n", "task-1", ())], 1, 2.5)
        done = store.finish(lease, COMPLETED, 3.0, outcome="done")
        assert done == store.get("t1") and (done.last_node, done.outcome) == ("n", "done")
        failed = store.finish(claim(store, "t1", 4.0), FAILED, 5.0, error="ValueError: boom")
        assert failed == store.get("t1") and failed.status == FAILED
        cancel = {"by": "api", "run": "r1", "action": "interrupt"}
        cancelled = store.finish(claim(store, "t1", 6.0), COMPLETED, 7.0, cancel=cancel)
        assert cancelled == store.get("t1") and cancelled.runner is None
        asked = [request(make_hold(node), "t1", 8.0) for node in ("a", "b")]
        paused = store.finish(claim(store, "t1", 8.0), PAUSED, 9.0, requests=iter(asked))
        assert paused == store.get("t1") and [a.node for a in paused.holds] == ["a", "b"]

    def test_a_paused_thread_refuses_a_new_turn(self, store: SessionStore) -> None:
        pause(store, "t1", make_hold())
        with pytest.raises(ThreadPausedError, match="t1"):
            claim(store, "t1", 20.0)
        with pytest.raises(NothingToRecoverError, match="t1"):
            store.claim_recovery("t1", runner="r", ttl=TTL, now=20.0)
        assert store.get("t1").status == PAUSED

    def test_a_failed_turn_is_recovered_with_its_turn_not_restarted(self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 1.0)
        lease = store.claim_start("t1", runner="runner-a", ttl=TTL, now=2.0, input={"amount": 3}, inbox=None)
        store.finish(lease, FAILED, 3.0, error="ValueError: boom")
        failed = store.get("t1")
        assert (failed.status, failed.error) == (FAILED, "ValueError: boom")
        recovered = store.claim_recovery("t1", runner="runner-b", ttl=TTL, now=5.0)
        assert recovered.turn == lease.turn and recovered.turn["input"] == {"amount": 3}
        assert (store.get("t1").status, store.get("t1").error) == (RUNNING, None)

    def test_a_failed_thread_takes_a_new_turn_with_new_input_and_keeps_the_failure_on_its_trail(
            self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 1.0)
        store.finish(claim(store, "t1", 2.0), FAILED, 3.0, error="ValueError: boom")
        lease = store.claim_start("t1", runner="runner-b", ttl=TTL, now=4.0, input={"amount": 4}, inbox=None)
        assert lease.turn["kind"] == "start" and lease.turn["input"] == {"amount": 4}
        assert (store.get("t1").status, store.get("t1").error) == (RUNNING, None)
        assert [e.kind for e in store.audit("t1")][-2:] == [AuditKind.FAILED, AuditKind.CLAIMED]

    def test_a_cancelled_turn_is_recorded_cancelled_and_frees_the_thread(self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 1.0)
        store.record_nodes(lease := claim(store, "t1", 2.0), [], 7, 2.5)
        store.finish(lease, COMPLETED, 3.0, cancel={"by": "alice", "run": "r-1", "action": "rollback"},
                     audited_step=2)
        freed = store.get("t1")
        assert (freed.status, freed.runner, store.audited_step("t1")) == (COMPLETED, None, 2)
        ended = store.audit("t1")[-1]
        assert (ended.kind, ended.detail) == (AuditKind.CANCELLED, {
            "runner": "runner-a", "by": "alice", "run": "r-1", "action": "rollback", "status": COMPLETED})
        claim(store, "t1", 4.0)  # the next turn may start

    def test_a_rollback_reopens_the_approvals_it_undid_and_leaves_the_thread_paused_on_them(
            self, store: SessionStore) -> None:
        [asked] = pause(store, "t1", make_hold())
        lease = store.decide("t1", asked.approval_id, APPROVED, decider="ana", now=20.0, current=make_hold(),
                             runner="runner-b", ttl=TTL)
        assert lease is not None
        store.finish(lease, PAUSED, 21.0, cancel={"by": "alice", "run": "r-1", "action": "rollback"},
                     reopened=[asked.approval_id, "ap-never-asked"])
        again = store.approval(asked.approval_id)
        assert (again.state, again.decided_by, again.decided_at) == (OPEN, None, None)
        assert (store.get("t1").status, [h.approval_id for h in store.get("t1").holds]) == (
            PAUSED, [asked.approval_id])
        ended = store.audit("t1")[-1]
        assert (ended.kind, ended.detail["reopened"], ended.detail["holds"]) == (
            AuditKind.CANCELLED, [asked.approval_id], [asked.approval_id])
        assert store.decide("t1", asked.approval_id, DECLINED, decider="bo", now=22.0, current=make_hold(),
                            runner="runner-c", ttl=TTL) is not None  # answered afresh

    def test_a_completed_thread_has_nothing_to_recover(self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 1.0)
        store.finish(claim(store, "t1", 2.0), COMPLETED, 3.0)
        with pytest.raises(NothingToRecoverError, match="t1"):
            store.claim_recovery("t1", runner="r", ttl=TTL, now=4.0)

    # -- events ----------------------------------------------------------------------

    def test_events_queue_until_a_start_turn_with_an_inbox_takes_them_in_order(
            self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 1.0)
        first = store.post_event("t1", "note", {"text": "one"}, 2.0)
        second = store.post_event("t1", "note", {"text": "two"}, 3.0)
        assert first.event_id < second.event_id and store.events("t1") == [first, second]
        assert first.delivered_at is None
        lease = store.claim_start("t1", runner="r", ttl=TTL, now=4.0, input={"inbox": [{"given": 1}]},
                                  inbox="inbox")
        assert lease.turn["input"]["inbox"] == [
            {"given": 1},
            {"event_id": first.event_id, "kind": "note", "payload": {"text": "one"}},
            {"event_id": second.event_id, "kind": "note", "payload": {"text": "two"}}]
        assert [e.delivered_at for e in store.events("t1")] == [4.0, 4.0]
        third = store.post_event("t1", "note", {"text": "three"}, 5.0)
        store.finish(lease, COMPLETED, 6.0)
        again = store.claim_start("t1", runner="r", ttl=TTL, now=7.0, input={}, inbox="inbox")
        assert [e["event_id"] for e in again.turn["input"]["inbox"]] == [third.event_id]

    def test_events_wait_while_a_turn_has_no_inbox(self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 1.0)
        store.post_event("t1", "note", {}, 2.0)
        lease = claim(store, "t1", 3.0)
        assert lease.turn["input"] == {} and store.events("t1")[0].delivered_at is None

    # -- audit -----------------------------------------------------------------------

    def test_the_audit_trail_only_grows(self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 1.0)
        lease = claim(store, "t1", 2.0)
        early = store.audit("t1")
        assert [e.kind for e in early] == ["created", "claimed"]
        store.finish(lease, PAUSED, 3.0, requests=[request(make_hold(), "t1", 3.0)])
        store.post_event("t1", "note", {}, 4.0)
        later = store.audit("t1")
        assert later[:len(early)] == early
        assert [e.kind for e in later] == ["created", "claimed", "asked", PAUSED, "event"]
        assert [e.seq for e in later] == sorted({e.seq for e in later})
        assert [e.at for e in later] == [1.0, 2.0, 3.0, 3.0, 4.0]

    def test_the_audit_trail_after_a_seq_is_only_the_entries_past_it(self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 1.0)
        lease = claim(store, "t1", 2.0)
        seen = store.audit("t1")
        store.finish(lease, PAUSED, 3.0, requests=[request(make_hold(), "t1", 3.0)])
        assert store.audit("t1", seen[-1].seq) == store.audit("t1")[len(seen):]
        assert store.audit("t1", store.audit("t1")[-1].seq) == []

    def test_where_the_audit_trail_ends_is_its_newest_entrys_seq(self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 1.0)
        store.create("t2", GRAPH, 1.5)
        lease = claim(store, "t1", 2.0)
        store.finish(lease, PAUSED, 3.0, requests=[request(make_hold(), "t1", 3.0)])
        trail = store.audit("t1")
        assert store.last_seq("t1") == trail[-1].seq == store.last_seq("t1", trail[0].seq)
        assert store.last_seq("t1", trail[-1].seq) == trail[-1].seq  # none past it: ``after`` itself
        assert store.last_seq("t2") == store.audit("t2")[-1].seq != trail[-1].seq
        with pytest.raises(UnknownSessionError):
            store.last_seq("nobody")

    def test_a_completed_node_is_recorded_once_however_often_it_is_seen(self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 1.0)
        lease = claim(store, "t1", 2.0)
        seen = NodeRun(3, "n", "task-1", ("log",))
        assert store.record_nodes(lease, [seen], 3, 3.0) == 1
        assert store.record_nodes(lease, [seen, NodeRun(4, "m", "task-2", ())], 4, 4.0) == 1
        assert store.record_nodes(lease, [seen], 4, 5.0) == 0
        nodes = [(e.node, e.step, e.detail) for e in store.audit("t1") if e.kind == AuditKind.NODE]
        assert nodes == [("n", 3, {"writes": ["log"]}), ("m", 4, {"writes": []})]
        assert store.audited_step("t1") == 4
        assert (store.get("t1").last_node, store.get("t1").last_step) == ("m", 4)
        assert [(s.last_node, s.last_step) for s in store.list()] == [("m", 4)]

    def test_a_run_is_recorded_once_and_a_lost_lease_cannot_record_one(self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 1.0)
        stale = claim(store, "t1", 2.0)
        run = {"run_id": "run-1", "attempt": 1, "status": "completed", "stop_reason": "completed",
               "tokens": 12}
        store.record_run(stale, run, 3.0)
        store.record_run(stale, run, 3.5)
        assert [e.detail for e in store.audit("t1") if e.kind == "run"] == [run]
        store.claim_recovery("t1", runner="runner-b", ttl=TTL, now=TTL + 3)
        with pytest.raises(LeaseLostError):
            store.record_run(stale, {**run, "run_id": "run-2"}, TTL + 4)
        assert [e.detail["run_id"] for e in store.audit("t1") if e.kind == "run"] == ["run-1"]

    def test_a_thread_keeps_the_owner_and_tenant_it_was_created_with(self, store: SessionStore) -> None:
        store.create("mine", GRAPH, 5.0, owner="alice", tenant="acme")
        store.create("nobodys", GRAPH, 6.0)
        assert (store.get("mine").owner, store.get("mine").tenant) == ("alice", "acme")
        assert (store.get("nobodys").owner, store.get("nobodys").tenant) == (None, None)
        assert {s.thread_id: s.owner for s in store.list()} == {"mine": "alice", "nobodys": None}
        assert store.audit("mine")[0].detail == {"graph": GRAPH, "owner": "alice", "tenant": "acme"}

    def test_a_threads_own_metadata_reads_back_and_merges_key_by_key(self, store: SessionStore) -> None:
        asked = {"user": "東京", "tags": ["a", {"b": None}], "n": 1.5, "deep": {"x": {"y": True}}}
        store.create("meta", GRAPH, 5.0, metadata=asked)
        store.create("bare", GRAPH, 6.0)
        assert (store.get("meta").metadata, store.get("bare").metadata) == (asked, {})
        merged = store.update_metadata("meta", {"n": 2, "deep": {"z": 0}, "new": "yes"}, 9.0, by="ana")
        assert merged.metadata == {"user": "東京", "tags": ["a", {"b": None}], "n": 2, "deep": {"z": 0},
                                   "new": "yes"}
        changed = store.audit("meta")[-1]
        assert (changed.kind, changed.detail) == (AuditKind.METADATA,
                                                  {"by": "ana", "keys": ["deep", "n", "new"]})
        assert merged.updated_at == 9.0 and store.get("meta") == merged
        assert {s.thread_id: s.metadata for s in store.list()}["meta"] == merged.metadata

    # -- sign-in records (a store that keeps them: SignInRecords) -------------------------

    def test_a_signed_out_page_session_stays_revoked_until_it_would_have_expired(
            self, store: SessionStore) -> None:
        records = _sign_ins(store)
        records.revoke_sign_in("nonce-1", until=100.0, now=1.0)
        records.revoke_sign_in("nonce-1", until=100.0, now=2.0)  # twice: harmless
        assert records.sign_in_revoked("nonce-1", 50.0)
        assert not records.sign_in_revoked("nonce-2", 50.0)
        assert not records.sign_in_revoked("nonce-1", 101.0)

    def test_failed_sign_ins_are_counted_per_subject_within_their_window(self, store: SessionStore) -> None:
        records = _sign_ins(store)
        records.sign_in_failed(["user:bob", "address:10.0.0.1"], 10.0, forget_before=0.0)
        records.sign_in_failed(["user:bob"], 20.0, forget_before=0.0)
        assert records.sign_in_failures(["user:bob", "address:10.0.0.1", "user:alice"], since=0.0) == {
            "user:bob": [10.0, 20.0], "address:10.0.0.1": [10.0]}
        assert records.sign_in_failures(["user:bob"], since=15.0) == {"user:bob": [20.0]}
        records.sign_in_failed(["user:carol"], 30.0, forget_before=15.0)  # forgets what is older
        assert records.sign_in_failures(["user:bob", "address:10.0.0.1"], since=0.0) == {"user:bob": [20.0]}

    # -- listing and retention ---------------------------------------------------------

    def test_list_filters_by_status_most_recently_changed_first(self, store: SessionStore) -> None:
        for i, thread_id in enumerate(("a", "b", "c")):
            store.create(thread_id, GRAPH, float(i))
        claim(store, "a", 5.0)
        pause(store, "d", make_hold(), now=6.0)
        assert [s.thread_id for s in store.list()] == ["d", "a", "c", "b"]
        assert [s.thread_id for s in store.list(CREATED)] == ["c", "b"]
        assert [s.thread_id for s in store.list(RUNNING)] == ["a"]
        assert store.list(COMPLETED) == []
        assert [s.holds for s in store.list(PAUSED)] == [store.get("d").holds]

    def test_prune_removes_old_finished_sessions_and_keeps_live_ones(self, store: SessionStore) -> None:
        for status in (COMPLETED, FAILED):
            store.create(status, GRAPH, 1.0)
            store.post_event(status, "note", {}, 1.0)
            store.finish(claim(store, status, 1.0), status, 2.0, error="e" if status == FAILED else None)
        gate = make_hold(kind=GATE)
        self.decide(store, pause(store, REJECTED, gate, now=1.0)[0], DECLINED, current=gate, now=2.0)
        late = make_hold(ttl=0.5)
        with pytest.raises(ApprovalExpiredError):
            self.decide(store, pause(store, EXPIRED, late, now=1.0)[0], current=late, now=2.0)
        store.create(CREATED, GRAPH, 1.0)
        pause(store, PAUSED, make_hold(), now=1.0)
        store.create(RUNNING, GRAPH, 1.0)
        claim(store, RUNNING, 1.0)
        store.create("young", GRAPH, 1.0)
        store.finish(claim(store, "young", 1.0), COMPLETED, 50.0)

        assert sorted(store.prune(10.0)) == sorted([COMPLETED, FAILED, REJECTED, EXPIRED])
        assert sorted(s.thread_id for s in store.list()) == sorted([CREATED, PAUSED, RUNNING, "young"])
        for gone in (COMPLETED, FAILED, REJECTED, EXPIRED):
            for read in (store.get, store.approvals, store.events, store.audit):
                with pytest.raises(UnknownSessionError):
                    read(gone)
        assert [a.state for a in store.approvals(PAUSED)] == [OPEN]
        assert store.prune(10.0) == []

    def test_a_pruned_entry_is_appended_and_an_unknown_thread_refused(self, store: SessionStore) -> None:
        store.create("t1", GRAPH, 1.0)
        store.finish(claim(store, "t1", 1.0), COMPLETED, 2.0)
        detail = {"by": "ana", "strategy": "keep_latest", "checkpoints_dropped": 3}
        store.record_pruned("t1", detail, 3.0)
        last = store.audit("t1")[-1]
        assert (last.kind, last.at, last.detail) == (AuditKind.PRUNED, 3.0, detail)
        assert store.get("t1").status == COMPLETED
        with pytest.raises(UnknownSessionError, match="nope"):
            store.record_pruned("nope", detail, 3.0)

    def test_footprint_names_where_the_bytes_are(self, store: SessionStore) -> None:
        pause(store, "t1", make_hold())
        sizes = store.footprint()
        assert all(isinstance(where, str) and isinstance(size, int) and size >= 0
                   for where, size in sizes.items())

    def test_a_closed_store_closes_again_quietly(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        store.create("t1", GRAPH, 1.0)
        store.close()
        store.close()

    def test_sessions_approvals_and_leases_survive_close_and_reopen(self, tmp_path: Path) -> None:
        if not self.durable:
            pytest.skip("store under test declares durable = False")
        store = self.make_store(tmp_path)
        [asked] = pause(store, "paused", make_hold())
        store.post_event("paused", "note", {"text": "東京"}, 11.0)
        store.create("running", GRAPH, 1.0)
        lease = claim(store, "running", 2.0)
        before = (store.list(), store.approvals("paused"), store.events("paused"), store.audit("paused"))
        store.close()
        reopened = self.reopen_store(tmp_path)
        try:
            assert (reopened.list(), reopened.approvals("paused"), reopened.events("paused"),
                    reopened.audit("paused")) == before
            assert reopened.holds(lease)
            assert self.decide(reopened, asked, current=make_hold()) is not None
        finally:
            reopened.close()


def _sign_ins(store: SessionStore) -> SignInRecords:
    """The store as ``SignInRecords`` (the test is skipped for a store that keeps none)."""
    if not isinstance(store, SignInRecords):
        pytest.skip("the store keeps no sign-in records (SignInRecords): a server's pages cannot use it")
    return store
