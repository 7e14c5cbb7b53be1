"""A conformance kit for ``RunStore`` implementations (``grapharc.runs.contracts``), ours or a third party's.

Subclass ``RunStoreConformance`` in a class pytest collects (``Test...``) and override
``make_store(tmp_path)``; every ``test_`` method here then runs against your store. Set
``durable = True`` to also prove that runs survive ``close()`` and reopening. Times are passed
explicitly, so nothing here waits on a clock.

    class TestMyRunStore(RunStoreConformance):
        durable = True

        def make_store(self, tmp_path):
            return open_store(f"mine:{tmp_path}", kind="runs")
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from grapharc.errors import GraphARCError
from grapharc.runs.contracts import RunStore, refreshed
from grapharc.runs.errors import RunError, RunInFlightError, ThreadBusyError, UnknownRunError
from grapharc.runs.records import (
    ENQUEUE,
    ERROR,
    INTERRUPTED,
    PENDING,
    ROLLBACK,
    RUNNING,
    SUCCESS,
    LiveEvent,
    RunRecord,
)
from grapharc.runtime.budget import Budget
from grapharc.testing.store_kit import StoreKit, race

TTL = 10.0
RACERS = 8
GRAPH = "kit-graph"
GRAPHS = (GRAPH,)


def new_run(thread_id: str, now: float = 1.0, **fields: Any) -> RunRecord:
    """A pending run of ``thread_id`` asking for a start turn (of ``GRAPH`` unless ``fields`` say)."""
    asked: dict[str, Any] = {"assistant_id": GRAPH, "request": {"kind": "start", "input": {"topic": "東京"}},
                             **fields}
    return RunRecord(run_id=uuid4().hex, thread_id=thread_id, created_at=now, updated_at=now, **asked)


class RunStoreConformance(StoreKit[RunStore]):
    """The ``RunStore`` contract as pytest tests; subclass it and implement ``make_store``."""

    def test_store_satisfies_the_run_store_protocol(self, store: RunStore) -> None:
        assert isinstance(store, RunStore)

    def test_a_run_is_kept_as_asked_and_read_back(self, store: RunStore) -> None:
        budget = Budget(max_iterations=5, max_seconds=30.0)
        asked = new_run("t1", after_seq=7, stream_modes=("updates", "events"), budget=budget,
                        multitask_strategy=ENQUEUE, metadata={"who": "kit"})
        kept = store.add(asked, exclusive=True)
        assert kept.seq > 0 and kept.status == PENDING and kept.attempts == 0
        assert store.get("t1", asked.run_id) == kept
        assert (kept.request, kept.budget, kept.stream_modes, kept.after_seq, kept.metadata) == (
            asked.request, budget, ("updates", "events"), 7, {"who": "kit"})

    def test_whether_a_run_has_a_webhook_is_kept_and_claimed_with_it(self, store: RunStore) -> None:
        hooked = store.add(new_run("t1", webhook=True), exclusive=True)
        plain = store.add(new_run("t2"), exclusive=True)
        kept = store.get("t1", hooked.run_id), store.get("t2", plain.run_id)
        assert [run.webhook for run in kept] == [True, False]
        claimed = [store.claim_next("w", 2.0, TTL, GRAPHS) for _ in range(2)]
        assert {(run.run_id, run.webhook) for run in claimed if run is not None} == {
            (hooked.run_id, True), (plain.run_id, False)}

    def test_an_unknown_run_or_the_wrong_thread_is_refused(self, store: RunStore) -> None:
        run = store.add(new_run("t1"), exclusive=True)
        with pytest.raises(UnknownRunError, match="no run"):
            store.get("t1", "nope")
        with pytest.raises(UnknownRunError):
            store.get("t2", run.run_id)
        with pytest.raises(UnknownRunError):
            store.request_cancel("t2", run.run_id, 2.0)

    def test_text_utf8_cannot_hold_is_refused_naming_it_and_nothing_is_kept(self, store: RunStore) -> None:
        """A lone surrogate (what bytes that were not UTF-8 decode to) in an id, the request or metadata."""
        for asked in (new_run("t\ud800"), new_run("t1", metadata={"note": "\udc80"}),
                      new_run("t1", request={"kind": "start", "input": {"\ud83d": 1}})):
            with pytest.raises(GraphARCError, match="not text"):
                store.add(asked, exclusive=True)
        assert store.of_thread("t1") == []
        kept = store.add(new_run("t1", metadata={"note": "\U0001f600 東京"}), exclusive=True)
        assert store.get("t1", kept.run_id).metadata == {"note": "\U0001f600 東京"}

    def test_a_threads_runs_are_listed_newest_first(self, store: RunStore) -> None:
        first = store.add(new_run("t1"), exclusive=False)
        second = store.add(new_run("t1"), exclusive=False)
        store.add(new_run("t2"), exclusive=False)
        assert [r.run_id for r in store.of_thread("t1")] == [second.run_id, first.run_id]
        assert store.of_thread("none") == []

    def test_a_threads_runs_are_paged_and_filtered_by_status_in_the_store(self, store: RunStore) -> None:
        runs = [store.add(new_run("t1"), exclusive=False) for _ in range(5)]
        store.add(new_run("t2"), exclusive=False)
        newest_first = [r.run_id for r in reversed(runs)]
        assert [r.run_id for r in store.of_thread("t1", limit=2)] == newest_first[:2]
        assert [r.run_id for r in store.of_thread("t1", limit=2, offset=2)] == newest_first[2:4]
        assert [r.run_id for r in store.of_thread("t1", limit=10, offset=4)] == newest_first[4:]
        assert store.of_thread("t1", limit=0) == [] and store.of_thread("t1", limit=3, offset=9) == []
        store.request_cancel("t1", runs[1].run_id, 2.0)
        store.request_cancel("t1", runs[3].run_id, 2.0)
        cancelled = [runs[3].run_id, runs[1].run_id]
        assert [r.run_id for r in store.of_thread("t1", status=INTERRUPTED)] == cancelled
        second_page = store.of_thread("t1", status=INTERRUPTED, limit=1, offset=1)
        assert [r.run_id for r in second_page] == cancelled[1:]
        assert len(store.of_thread("t1", status=PENDING)) == 3
        for limit, offset in ((-1, 0), (2, -1), (None, 2)):
            with pytest.raises(ValueError, match="a page needs"):
                store.of_thread("t1", limit=limit, offset=offset)

    def test_an_exclusive_run_is_refused_while_another_is_pending_or_running(self, store: RunStore) -> None:
        first = store.add(new_run("t1"), exclusive=True)
        with pytest.raises(ThreadBusyError, match=first.run_id):
            store.add(new_run("t1"), exclusive=True)
        claimed = store.claim_next("w1", 1.0, TTL, GRAPHS)
        assert claimed is not None and claimed.run_id == first.run_id
        with pytest.raises(ThreadBusyError, match="running"):
            store.add(new_run("t1"), exclusive=True)
        queued = store.add(new_run("t1"), exclusive=False)
        assert queued.status == PENDING
        assert store.add(new_run("t2"), exclusive=True).status == PENDING
        assert len(store.of_thread("t1")) == 2

    def test_a_threads_runs_are_claimed_one_at_a_time_in_order(self, store: RunStore) -> None:
        a1 = store.add(new_run("a"), exclusive=False)
        a2 = store.add(new_run("a"), exclusive=False)
        b1 = store.add(new_run("b"), exclusive=False)
        first = store.claim_next("w1", 2.0, TTL, GRAPHS)
        assert first is not None and first.run_id == a1.run_id
        assert (first.status, first.worker, first.claim_expires_at, first.attempts) == (
            RUNNING, "w1", 12.0, 1)
        second = store.claim_next("w2", 2.0, TTL, GRAPHS)
        assert second is not None and second.run_id == b1.run_id  # a2 waits for a1
        assert store.claim_next("w2", 2.0, TTL, GRAPHS) is None
        assert store.finish(a1.run_id, "w1", SUCCESS, 3.0, end_seq=9)
        third = store.claim_next("w2", 3.0, TTL, GRAPHS)
        assert third is not None and third.run_id == a2.run_id

    def test_a_run_added_claimed_is_the_workers_and_holds_its_thread(self, store: RunStore) -> None:
        queued = store.add(new_run("t1"), exclusive=False)
        held = store.add_claimed(new_run("t1", after_seq=4), "w1", 2.0, TTL)
        assert (held.status, held.worker, held.claim_expires_at, held.attempts, held.after_seq) == (
            RUNNING, "w1", 12.0, 1, 4)
        assert store.claim_next("w2", 3.0, TTL, GRAPHS) is None  # neither it nor the run behind it
        other = store.add_claimed(new_run("t2"), "w1", 2.0, TTL)
        with pytest.raises(ThreadBusyError, match="running"):
            store.add(new_run("t2"), exclusive=True)
        assert store.stale(11.0) == []
        assert [r.run_id for r in store.stale(13.0)] == [held.run_id, other.run_id]
        assert store.finish(held.run_id, "w1", SUCCESS, 4.0, end_seq=9)
        after = store.claim_next("w2", 5.0, TTL, GRAPHS)
        assert after is not None and after.run_id == queued.run_id

    def test_the_worker_holding_a_run_records_where_it_began_once(self, store: RunStore) -> None:
        run = store.add(new_run("t1"), exclusive=True)
        assert store.get("t1", run.run_id).after_seq is None
        assert not store.begin(run.run_id, "w1", 3)  # pending: nobody holds it
        store.claim_next("w1", 1.0, TTL, GRAPHS)
        assert not store.begin(run.run_id, "w2", 3)
        assert store.begin(run.run_id, "w1", 3)
        assert not store.begin(run.run_id, "w1", 8)
        assert store.get("t1", run.run_id).after_seq == 3

    def test_a_run_refreshed_reads_as_it_stands_as_get_does(self, store: RunStore) -> None:
        """``refreshed`` (what a stream reads on every wake) answers what ``get`` answers at each
        point of a run's life: claimed, begun, cancelled (its request rewritten), reclaimed, ended,
        deleted."""
        run = store.add(new_run("t1", budget=Budget(max_iterations=5), metadata={"k": "v"}), exclusive=True)
        seen = run
        changes = (lambda: store.claim_next("w1", 1.0, TTL, GRAPHS),
                   lambda: store.begin(run.run_id, "w1", 3),
                   lambda: store.request_cancel("t1", run.run_id, 2.0, by="alice"),
                   lambda: store.reclaim(run.run_id, "w2", 20.0, TTL),
                   lambda: store.finish(run.run_id, "w2", INTERRUPTED, 21.0, end_seq=7, error="cancelled"))
        for change in changes:
            change()
            seen = refreshed(store, seen)
            assert seen == store.get("t1", run.run_id)
        assert (seen.status, seen.worker, seen.end_seq, seen.cancel["by"]) == (INTERRUPTED, "w2", 7, "alice")
        store.delete("t1", run.run_id)
        with pytest.raises(UnknownRunError):
            refreshed(store, seen)

    def test_a_worker_claims_only_runs_of_the_graphs_it_drives(self, store: RunStore) -> None:
        other = store.add(new_run("t1", assistant_id="other-graph"), exclusive=True)
        mine = store.add(new_run("t2"), exclusive=True)
        assert store.claim_next("w1", 1.0, TTL, ()) is None
        claimed = store.claim_next("w1", 1.0, TTL, GRAPHS)
        assert claimed is not None and claimed.run_id == mine.run_id
        assert store.claim_next("w1", 1.0, TTL, GRAPHS) is None
        theirs = store.claim_next("w2", 1.0, TTL, ("other-graph", GRAPH))
        assert theirs is not None and theirs.run_id == other.run_id

    def test_only_the_worker_holding_a_run_ends_it(self, store: RunStore) -> None:
        run = store.add(new_run("t1"), exclusive=True)
        assert not store.finish(run.run_id, "w1", SUCCESS, 2.0, end_seq=5)  # pending: nobody holds it
        store.claim_next("w1", 2.0, TTL, GRAPHS)
        assert not store.finish(run.run_id, "w2", SUCCESS, 3.0, end_seq=5)
        assert store.finish(run.run_id, "w1", ERROR, 3.0, end_seq=5, error="boom")
        ended = store.get("t1", run.run_id)
        assert (ended.status, ended.end_seq, ended.error, ended.ended) == (ERROR, 5, "boom", True)
        assert not store.finish(run.run_id, "w1", SUCCESS, 4.0, end_seq=6)
        with pytest.raises(RunError, match="success, error or interrupted"):
            store.finish(run.run_id, "w1", PENDING, 4.0, end_seq=6)

    def test_a_pending_run_cancelled_ends_at_once_and_is_never_claimed(self, store: RunStore) -> None:
        run = store.add(new_run("t1", after_seq=4), exclusive=True)
        cancelled = store.request_cancel("t1", run.run_id, 2.0)
        assert (cancelled.status, cancelled.end_seq, cancelled.error) == (INTERRUPTED, 4, "cancelled")
        assert store.claim_next("w1", 2.0, TTL, GRAPHS) is None

    def test_a_running_run_cancelled_is_flagged_for_its_worker(self, store: RunStore) -> None:
        run = store.add(new_run("t1"), exclusive=True)
        other = store.add(new_run("t2"), exclusive=True)
        store.claim_next("w1", 1.0, TTL, GRAPHS)
        store.claim_next("w1", 1.0, TTL, GRAPHS)
        assert store.heartbeat("w1", 2.0, TTL) == []
        flagged = store.request_cancel("t1", run.run_id, 3.0)
        assert flagged.status == RUNNING and flagged.cancel_requested
        assert store.heartbeat("w1", 4.0, TTL) == [run.run_id]
        assert store.heartbeat("w2", 4.0, TTL) == []
        assert store.get("t2", other.run_id).claim_expires_at == 14.0
        assert store.finish(run.run_id, "w1", INTERRUPTED, 5.0, end_seq=1)
        assert store.request_cancel("t1", run.run_id, 6.0).status == INTERRUPTED  # ended: unchanged

    def test_a_worker_has_work_only_to_take_a_run_or_stop_one(self, store: RunStore) -> None:
        """``has_work``: a runnable run, a stale one, a cancel asked of one of the worker's own."""
        assert not store.has_work("w1", 1.0, GRAPHS)
        run = store.add(new_run("t1"), exclusive=True)
        assert store.has_work("w1", 1.0, GRAPHS) and not store.has_work("w1", 1.0, ["another-graph"])
        assert not store.has_work("w1", 1.0, [])
        store.claim_next("w1", 1.0, TTL, GRAPHS)  # claimed until 11
        assert not store.has_work("w1", 2.0, GRAPHS) and not store.has_work("w2", 2.0, GRAPHS)
        assert store.has_work("w2", 12.0, GRAPHS)  # stale: w2 may reclaim it
        store.request_cancel("t1", run.run_id, 3.0)
        assert store.has_work("w1", 3.0, GRAPHS) and store.has_work("w1", 3.0, [])
        assert not store.has_work("w2", 3.0, GRAPHS)  # another worker's run
        assert store.get("t1", run.run_id).claim_expires_at == 11.0  # a look writes nothing

    def test_a_running_runs_cancel_says_who_asked_and_the_action(self, store: RunStore) -> None:
        run = store.add(new_run("t1"), exclusive=True)
        store.claim_next("w1", 1.0, TTL, GRAPHS)
        flagged = store.request_cancel("t1", run.run_id, 2.0, by="alice", action=ROLLBACK)
        assert flagged.cancel == {"by": "alice", "action": ROLLBACK}
        assert store.get("t1", run.run_id).request["input"] == {"topic": "東京"}  # the request is kept

    def test_a_pending_run_rolled_back_is_deleted(self, store: RunStore) -> None:
        run = store.add(new_run("t1"), exclusive=True)
        assert store.request_cancel("t1", run.run_id, 2.0, action=ROLLBACK).run_id == run.run_id
        with pytest.raises(UnknownRunError):
            store.get("t1", run.run_id)
        assert store.claim_next("w1", 2.0, TTL, GRAPHS) is None

    def test_a_running_run_rolled_back_is_deleted_and_frees_its_thread(self, store: RunStore) -> None:
        run = store.add(new_run("t1"), exclusive=True)
        store.claim_next("w1", 1.0, TTL, GRAPHS)
        behind = store.add(new_run("t1"), exclusive=False)
        store.delete("t1", run.run_id, rolled_back=True)
        assert store.of_thread("t1") == [behind]
        assert store.claim_next("w1", 2.0, TTL, GRAPHS).run_id == behind.run_id  # type: ignore[union-attr]

    def test_a_run_not_before_a_time_is_claimed_only_from_then_and_holds_its_threads_queue(
            self, store: RunStore) -> None:
        later = store.add(new_run("t1", not_before=10.0), exclusive=False)
        behind = store.add(new_run("t1"), exclusive=False)
        other = store.add(new_run("t2"), exclusive=False)
        assert store.get("t1", later.run_id).not_before == 10.0
        assert store.claim_next("w1", 9.0, TTL, GRAPHS) == store.get("t2", other.run_id)  # t1's first waits
        assert store.claim_next("w1", 9.0, TTL, GRAPHS) is None  # and the run behind it with it
        assert store.claim_next("w1", 10.0, TTL, GRAPHS) == store.get("t1", later.run_id)
        assert store.get("t1", behind.run_id).status == PENDING

    def test_unended_runs_of_every_thread_are_listed_by_status_oldest_first(self, store: RunStore) -> None:
        running = store.add(new_run("t1"), exclusive=True)
        store.claim_next("w1", 1.0, TTL, GRAPHS)
        pending = store.add(new_run("t2"), exclusive=True)
        ended = store.add(new_run("t3"), exclusive=True)
        store.request_cancel("t3", ended.run_id, 2.0)
        assert [r.run_id for r in store.unended()] == [running.run_id, pending.run_id]
        assert [r.run_id for r in store.unended((PENDING,))] == [pending.run_id]
        assert [r.run_id for r in store.unended((RUNNING,))] == [running.run_id]

    def test_only_an_ended_run_is_deleted(self, store: RunStore) -> None:
        run = store.add(new_run("t1"), exclusive=True)
        with pytest.raises(RunInFlightError, match="is pending; only an ended run can be deleted"):
            store.delete("t1", run.run_id)
        store.claim_next("w1", 1.0, TTL, GRAPHS)
        with pytest.raises(RunInFlightError, match="is running"):
            store.delete("t1", run.run_id)
        assert store.finish(run.run_id, "w1", SUCCESS, 2.0, end_seq=3)
        with pytest.raises(UnknownRunError):
            store.delete("t2", run.run_id)  # not that thread's
        store.delete("t1", run.run_id)
        assert store.of_thread("t1") == []
        with pytest.raises(UnknownRunError):
            store.delete("t1", run.run_id)

    def test_a_run_whose_worker_stopped_renewing_is_stale_and_reclaimed_once(self, store: RunStore) -> None:
        run = store.add(new_run("t1"), exclusive=True)
        store.claim_next("w1", 1.0, TTL, GRAPHS)  # claim until 11
        store.heartbeat("w1", 5.0, TTL)  # renewed until 15
        assert store.stale(12.0) == []
        assert [r.run_id for r in store.stale(16.0)] == [run.run_id]
        assert store.reclaim(run.run_id, "w2", 12.0, TTL) is None  # not stale yet at 12
        taken = store.reclaim(run.run_id, "w2", 16.0, TTL)
        assert taken is not None and (taken.worker, taken.attempts, taken.claim_expires_at) == ("w2", 2, 26.0)
        assert store.reclaim(run.run_id, "w3", 16.0, TTL) is None
        assert store.stale(16.0) == []
        assert not store.finish(run.run_id, "w1", SUCCESS, 17.0, end_seq=3)  # the dead worker is fenced off
        assert store.finish(run.run_id, "w2", SUCCESS, 17.0, end_seq=3)

    def test_of_workers_racing_for_one_run_exactly_one_claims_it(self, store: RunStore) -> None:
        run = store.add(new_run("t1"), exclusive=True)
        got, _ = race(RACERS, lambda i: store.claim_next(f"w{i}", 1.0, TTL, GRAPHS))
        winners = [r for r in got if r is not None]
        assert len(got) == RACERS and [r.run_id for r in winners] == [run.run_id]
        assert store.get("t1", run.run_id).worker == winners[0].worker

    def test_a_runs_live_log_is_read_in_order_past_a_cursor_and_deleted_with_its_thread(
            self, store: RunStore) -> None:
        run, other = store.add(new_run("t1"), exclusive=False), store.add(new_run("t2"), exclusive=False)
        assert store.last_live(run.run_id) == 0 and store.live_after(run.run_id, 0) == []
        batch = [LiveEvent(n=n, mode="messages-tuple", event="messages", data=f'[{{"content": "{n} 東京"}}]',
                           at=float(n)) for n in range(1, 451)]  # more rows than one statement inserts
        store.append_live(run.run_id, "t1", batch[:3])
        store.append_live(run.run_id, "t1", batch[3:])
        store.append_live(other.run_id, "t2", [LiveEvent(1, "custom", "custom|sub:1", "{}", 1.0)])
        assert store.live_after(run.run_id, 0) == batch and store.last_live(run.run_id) == 450
        assert store.live_after(run.run_id, 448) == batch[448:]
        with pytest.raises(GraphARCError):  # an event numbered twice: the batch is refused whole
            store.append_live(run.run_id, "t1", [LiveEvent(451, "custom", "custom", "1", 9.0), batch[0]])
        assert store.last_live(run.run_id) == 450
        store.forget_live("t1")
        assert store.live_after(run.run_id, 0) == [] and store.last_live(other.run_id) == 1

    def test_runs_survive_closing_and_reopening(self, tmp_path: Path) -> None:
        if not self.durable:
            pytest.skip("store under test declares durable = False")
        store = self.make_store(tmp_path)
        run = store.add(new_run("t1", budget=Budget(max_tokens=100)), exclusive=True)
        store.claim_next("w1", 1.0, TTL, GRAPHS)
        before = store.get("t1", run.run_id)
        store.close()
        reopened = self.reopen_store(tmp_path)
        try:
            assert reopened.get("t1", run.run_id) == before
            assert reopened.claim_next("w2", 2.0, TTL, GRAPHS) is None
        finally:
            reopened.close()
