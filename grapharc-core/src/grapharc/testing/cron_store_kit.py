"""A conformance kit for ``CronStore`` implementations (``grapharc.crons.contracts``).

Subclass ``CronStoreConformance`` in a class pytest collects and override ``make_store(tmp_path)``;
set ``durable = True`` to also prove that schedules survive ``close()`` and reopening. Times are
passed explicitly, so nothing here waits on a clock.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from grapharc.crons.contracts import CronStore
from grapharc.crons.errors import UnknownCronError
from grapharc.crons.manage import new_cron
from grapharc.crons.records import CronFilter, CronRecord
from grapharc.testing.store_kit import StoreKit, race

RACERS = 8
EVERY_MINUTE = "* * * * *"


def a_cron(now: float = 0.0, **fields: Any) -> CronRecord:
    """A new schedule of ``kit-graph`` firing every minute, made at ``now`` (``fields`` override)."""
    made = new_cron(assistant_id="kit-graph", schedule=EVERY_MINUTE, now=now,
                    payload={"assistant_id": "kit-graph", "input": {"topic": "東京"}},
                    metadata={"team": "kit"})
    return dataclasses.replace(made, **fields)


class CronStoreConformance(StoreKit[CronStore]):
    """The ``CronStore`` contract as pytest tests; subclass it and implement ``make_store``."""

    def test_store_satisfies_the_cron_store_protocol(self, store: CronStore) -> None:
        assert isinstance(store, CronStore)

    def test_a_schedule_is_kept_as_added_and_read_back(self, store: CronStore) -> None:
        cron = a_cron(thread_id="t-1", timezone="Europe/Paris", end_time=9e9, user_id="ada",
                      metadata={"note": "東京 \u00e9"}, on_run_completed="keep")
        assert store.add(cron) == cron == store.get(cron.cron_id)

    def test_an_unknown_schedule_is_refused_by_id(self, store: CronStore) -> None:
        for call in (store.get, store.delete, lambda cron_id: store.update(cron_id, lambda c: c)):
            with pytest.raises(UnknownCronError, match="no cron 'nope'"):
                call("nope")

    def test_a_deleted_schedule_is_gone(self, store: CronStore) -> None:
        kept, gone = store.add(a_cron()), store.add(a_cron())
        store.delete(gone.cron_id)
        with pytest.raises(UnknownCronError):
            store.get(gone.cron_id)
        assert [c.cron_id for c in store.search(CronFilter())] == [kept.cron_id]

    def test_a_search_filters_by_each_field_and_by_metadata_pairs(self, store: CronStore) -> None:
        first = store.add(a_cron(thread_id="t-1", user_id="ada", metadata={"team": "a", "tier": 1}))
        second = store.add(a_cron(assistant_id="other", enabled=False, metadata={"team": "b"}))
        found = {name: {c.cron_id for c in store.search(where)} for name, where in {
            "assistant": CronFilter(assistant_id="other"), "thread": CronFilter(thread_id="t-1"),
            "enabled": CronFilter(enabled=False), "user": CronFilter(user_id="ada"),
            "metadata": CronFilter(metadata={"team": "a", "tier": 1}),
            "no metadata match": CronFilter(metadata={"team": "a", "tier": 2}), "all": CronFilter()}.items()}
        assert found == {"assistant": {second.cron_id}, "thread": {first.cron_id},
                         "enabled": {second.cron_id}, "user": {first.cron_id}, "metadata": {first.cron_id},
                         "no metadata match": set(), "all": {first.cron_id, second.cron_id}}
        assert store.count(CronFilter(metadata={"team": "b"})) == 1 and store.count(CronFilter()) == 2

    def test_a_search_sorts_and_pages(self, store: CronStore) -> None:
        made = [store.add(a_cron(now=60.0 * n)) for n in range(5)]  # each a minute later: its own slot
        newest_first = [c.cron_id for c in reversed(made)]
        assert [c.cron_id for c in store.search(CronFilter())] == newest_first
        assert [c.cron_id for c in store.search(CronFilter(), limit=2, offset=1)] == newest_first[1:3]
        oldest_first = store.search(CronFilter(), sort_by="next_run_date", descending=False)
        assert [c.cron_id for c in oldest_first] == [c.cron_id for c in made]
        with pytest.raises(ValueError, match="cannot sort schedules by 'colour'"):
            store.search(CronFilter(), sort_by="colour")

    def test_an_update_revises_all_but_the_id_and_creation_time(self, store: CronStore) -> None:
        cron = store.add(a_cron())
        changed = store.update(cron.cron_id, lambda c: dataclasses.replace(
            c, cron_id="stolen", created_at=99.0, updated_at=5.0, schedule="0 9 * * *", enabled=False,
            payload={"input": {"topic": "new"}}))
        assert changed == store.get(cron.cron_id) == dataclasses.replace(
            cron, updated_at=5.0, schedule="0 9 * * *", enabled=False, payload={"input": {"topic": "new"}})

    def test_due_are_the_enabled_schedules_whose_slot_has_come_most_overdue_first(
            self, store: CronStore) -> None:
        late = store.add(a_cron(next_run_at=100.0))
        later = store.add(a_cron(next_run_at=50.0))
        store.add(a_cron(next_run_at=100.0, enabled=False))
        store.add(a_cron(next_run_at=None))
        store.add(a_cron(next_run_at=101.0))
        assert [c.cron_id for c in store.due(100.0)] == [later.cron_id, late.cron_id]

    def test_the_next_due_slot_is_the_least_of_the_enabled_schedules(self, store: CronStore) -> None:
        assert store.next_due() is None
        store.add(a_cron(next_run_at=50.0, enabled=False))
        store.add(a_cron(next_run_at=None))
        assert store.next_due() is None
        store.add(a_cron(next_run_at=120.0))
        soon = store.add(a_cron(next_run_at=90.0))
        assert store.next_due() == 90.0
        assert store.claim_slot(soon.cron_id, 90.0, 150.0)
        assert store.next_due() == 120.0

    def test_a_slot_is_claimed_once_by_moving_it_on(self, store: CronStore) -> None:
        cron = store.add(a_cron(next_run_at=60.0))
        assert store.claim_slot(cron.cron_id, 60.0, 120.0)
        assert not store.claim_slot(cron.cron_id, 60.0, 120.0)
        assert store.get(cron.cron_id).next_run_at == 120.0 and store.due(119.0) == []
        assert store.claim_slot(cron.cron_id, 120.0, None)  # past its end time: no slot after
        assert store.due(1e12) == []

    def test_a_disabled_or_changed_schedule_is_not_claimed(self, store: CronStore) -> None:
        off = store.add(a_cron(next_run_at=60.0, enabled=False))
        moved = store.add(a_cron(next_run_at=60.0))
        store.update(moved.cron_id, lambda c: dataclasses.replace(c, next_run_at=600.0))
        assert not store.claim_slot(off.cron_id, 60.0, 120.0)
        assert not store.claim_slot(moved.cron_id, 60.0, 120.0)
        assert not store.claim_slot("nope", 60.0, 120.0)

    def test_of_claims_racing_for_one_slot_exactly_one_wins(self, store: CronStore) -> None:
        cron = store.add(a_cron(next_run_at=60.0))
        won, _ = race(RACERS, lambda i: store.claim_slot(cron.cron_id, 60.0, 120.0))
        assert sorted(won) == [False] * (RACERS - 1) + [True]

    def test_schedules_survive_reopening(self, tmp_path: Path) -> None:
        if not self.durable:
            pytest.skip("the store under test does not claim durability")
        store = self.make_store(tmp_path)
        cron = store.add(a_cron(next_run_at=60.0))
        store.claim_slot(cron.cron_id, 60.0, 120.0)
        store.close()
        again = self.reopen_store(tmp_path)
        try:
            assert again.get(cron.cron_id) == dataclasses.replace(cron, next_run_at=120.0)
        finally:
            again.close()
