"""A conformance kit for ``WebhookStore`` implementations (``grapharc.webhooks.contracts``).

Subclass ``WebhookStoreConformance`` in a class pytest collects (``Test...``) and override
``make_store(tmp_path)`` and ``make_run_store(tmp_path)`` (the run store whose runs the
deliveries join: the same location); every ``test_`` method here then runs against them. Set
``durable = True`` to also prove that deliveries survive ``close()`` and reopening. Times are
passed explicitly, so nothing here waits on a clock.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from uuid import uuid4

import pytest

from grapharc.runs.contracts import RunStore
from grapharc.runs.records import ERROR, INTERRUPTED, SUCCESS, RunRecord
from grapharc.testing.run_store_kit import GRAPHS, new_run
from grapharc.testing.store_kit import StoreKit, race
from grapharc.webhooks.contracts import ORPHAN_SECONDS, WebhookStore
from grapharc.webhooks.records import DELIVERED, FAILED, PENDING, Delivery

HOLD = 10.0
RACERS = 8
URL = "http://127.0.0.1:9/hook"


class WebhookStoreConformance(StoreKit[WebhookStore]):
    """The ``WebhookStore`` contract as pytest tests; subclass it and implement both ``make_*``."""

    @abstractmethod
    def make_run_store(self, tmp_path: Path) -> RunStore:
        """The run store at the location ``make_store(tmp_path)`` uses."""

    @pytest.fixture
    def runs(self, tmp_path: Path, store: WebhookStore) -> Iterator[RunStore]:
        """The run store beside the store under test (opened after it), closed afterwards."""
        with closing(self.make_run_store(tmp_path)) as opened:
            yield opened

    def test_store_satisfies_the_webhook_store_protocol(self, store: WebhookStore) -> None:
        assert isinstance(store, WebhookStore)

    def test_a_delivery_is_due_only_once_its_run_has_ended(self, store: WebhookStore, runs: RunStore) -> None:
        run = expected(store, runs)
        assert not store.has_due(2.0) and store.claim_due("w1", 2.0, HOLD, 10) == []  # pending
        runs.claim_next("runner", 2.0, 30.0, GRAPHS)
        assert not store.has_due(3.0) and store.claim_due("w1", 3.0, HOLD, 10) == []  # running
        runs.finish(run.run_id, "runner", SUCCESS, 4.0, end_seq=1)
        assert store.has_due(5.0)
        [claimed] = store.claim_due("w1", 5.0, HOLD, 10)
        assert not store.has_due(5.0)  # claimed: not due again until its claim runs out
        assert (claimed.run_id, claimed.url, claimed.worker) == (run.run_id, URL, "w1")
        assert (claimed.status, claimed.attempts, claimed.next_attempt_at) == (PENDING, 1, 5.0 + HOLD)

    def test_every_end_makes_a_delivery_due(self, store: WebhookStore, runs: RunStore) -> None:
        ended = [ended_run(store, runs, status) for status in (SUCCESS, ERROR, INTERRUPTED)]
        claimed = store.claim_due("w1", 10.0, HOLD, 10)
        assert sorted(d.run_id for d in claimed) == sorted(run.run_id for run in ended)

    def test_a_claim_holds_until_it_runs_out_then_another_worker_takes_it(self, store: WebhookStore,
                                                                         runs: RunStore) -> None:
        run = ended_run(store, runs)
        assert len(store.claim_due("w1", 10.0, HOLD, 10)) == 1
        assert store.claim_due("w2", 10.0 + HOLD - 1, HOLD, 10) == []
        [taken] = store.claim_due("w2", 10.0 + HOLD, HOLD, 10)
        assert (taken.worker, taken.attempts) == ("w2", 2)
        assert not store.delivered(run.run_id, "w1", 30.0)  # the first claim is no longer w1's
        assert store.delivered(run.run_id, "w2", 30.0)

    def test_of_workers_racing_for_a_delivery_exactly_one_claims_it(self, store: WebhookStore,
                                                                    runs: RunStore) -> None:
        ended_run(store, runs)
        won, _ = race(RACERS, lambda i: store.claim_due(f"w{i}", 10.0, HOLD, 10))
        assert sorted(len(claimed) for claimed in won) == [0] * (RACERS - 1) + [1]

    def test_a_retry_is_due_at_its_time_with_the_body_kept(self, store: WebhookStore, runs: RunStore) -> None:
        run = ended_run(store, runs)
        store.claim_due("w1", 10.0, HOLD, 10)
        assert store.keep_body(run.run_id, "w1", '{"status": "success", "note": "東京"}')
        assert store.retry(run.run_id, "w1", "the receiver answered 500", 12.0)
        assert not store.has_due(11.9) and store.claim_due("w1", 11.9, HOLD, 10) == []
        assert store.has_due(12.0)
        [again] = store.claim_due("w1", 12.0, HOLD, 10)
        assert (again.attempts, again.last_error) == (2, "the receiver answered 500")
        assert again.body == '{"status": "success", "note": "東京"}'

    def test_a_delivered_or_failed_delivery_is_never_claimed_again(self, store: WebhookStore,
                                                                   runs: RunStore) -> None:
        done, given_up = ended_run(store, runs), ended_run(store, runs)
        store.claim_due("w1", 10.0, HOLD, 10)
        assert store.delivered(done.run_id, "w1", 11.0)
        assert store.fail(given_up.run_id, "w1", "the receiver answered 400")
        assert store.claim_due("w1", 10.0 + 10 * HOLD, HOLD, 10) == []
        assert (store.get(done.run_id) or missing()).status == DELIVERED
        failed = store.get(given_up.run_id) or missing()
        assert (failed.status, failed.last_error) == (FAILED, "the receiver answered 400")
        assert not store.retry(done.run_id, "w1", "late", 99.0)  # settled: no change applies

    def test_a_delivery_left_without_a_run_is_failed_once_it_is_an_orphan(self, store: WebhookStore,
                                                                          runs: RunStore) -> None:
        orphan = Delivery(run_id=uuid4().hex, thread_id="t-gone", url=URL, created_at=1.0)
        store.expect(orphan)
        assert not store.has_due(1.0 + ORPHAN_SECONDS - 1)
        assert store.claim_due("w1", 1.0 + ORPHAN_SECONDS - 1, HOLD, 10) == []
        assert (store.get(orphan.run_id) or missing()).status == PENDING
        assert store.has_due(2.0 + ORPHAN_SECONDS)  # an orphan to fail is work for the claim
        assert store.claim_due("w1", 2.0 + ORPHAN_SECONDS, HOLD, 10) == []
        assert (store.get(orphan.run_id) or missing()).status == FAILED
        assert not store.has_due(2.0 + ORPHAN_SECONDS)

    def test_a_forgotten_delivery_is_gone(self, store: WebhookStore, runs: RunStore) -> None:
        run = expected(store, runs, queued=False)
        store.forget(run.run_id)
        assert store.get(run.run_id) is None

    def test_deliveries_survive_reopening(self, tmp_path: Path, store: WebhookStore, runs: RunStore) -> None:
        if not self.durable:
            pytest.skip("this store does not say it is durable")
        run = ended_run(store, runs)
        store.claim_due("w1", 10.0, HOLD, 10)
        store.delivered(run.run_id, "w1", 11.0)
        store.close()
        with closing(self.reopen_store(tmp_path)) as reopened:
            assert (reopened.get(run.run_id) or missing()).status == DELIVERED


def expected(store: WebhookStore, runs: RunStore, *, queued: bool = True) -> RunRecord:
    """A new run whose delivery to ``URL`` is recorded (and the run queued, unless not ``queued``)."""
    run = new_run(uuid4().hex)
    store.expect(Delivery(run_id=run.run_id, thread_id=run.thread_id, url=URL, created_at=1.0))
    return runs.add(run, exclusive=False) if queued else run


def ended_run(store: WebhookStore, runs: RunStore, status: str = SUCCESS) -> RunRecord:
    """A run with a delivery, ended with ``status``."""
    run = expected(store, runs)
    runner = f"runner-{run.run_id}"
    claimed = runs.claim_next(runner, 2.0, 30.0, GRAPHS)
    assert claimed is not None
    runs.finish(claimed.run_id, runner, status, 3.0, end_seq=1)
    return claimed


def missing() -> Delivery:
    raise AssertionError("the store has no such delivery")
