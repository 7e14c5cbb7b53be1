"""A conformance kit for ``AssistantStore`` implementations (``grapharc.assistants.contracts``).

Subclass ``AssistantStoreConformance`` in a class pytest collects and override
``make_store(tmp_path)``; set ``durable = True`` to also prove that assistants survive ``close()``
and reopening. Times are passed explicitly, so nothing here waits on a clock.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from grapharc.assistants.contracts import AssistantStore
from grapharc.assistants.errors import AssistantExistsError, UnknownAssistantError, UnknownVersionError
from grapharc.assistants.records import CREATE, DELETE, SET_LATEST, UPDATE, Assistant, AssistantVersion
from grapharc.testing.store_kit import StoreKit, race

RACERS = 8


def first_version(graph_id: str = "kit-graph", at: float = 1.0, **fields: Any) -> AssistantVersion:
    """Version 1 of a new assistant of ``graph_id`` (a fresh id unless ``fields`` say)."""
    asked: dict[str, Any] = {"assistant_id": str(uuid4()), "version": 1, "graph_id": graph_id,
                             "config": {"configurable": {"model": "mock/東京"}, "tags": ["kit"]},
                             "context": {"tone": "formal"}, "metadata": {"team": "kit"}, "name": "kit",
                             "description": None, "created_at": at, "created_by": "ada", **fields}
    return AssistantVersion(**asked)


def renamed(name: str, at: float, by: str = "bo") -> Any:
    """A ``revise`` that keeps the assistant as it stands under a new name."""
    def revise(current: Assistant) -> AssistantVersion:
        return dataclasses.replace(current.current, name=name, created_at=at, created_by=by)
    return revise


class AssistantStoreConformance(StoreKit[AssistantStore]):
    """The ``AssistantStore`` contract as pytest tests; subclass it and implement ``make_store``."""

    def test_store_satisfies_the_assistant_store_protocol(self, store: AssistantStore) -> None:
        assert isinstance(store, AssistantStore)

    def test_an_assistant_is_kept_as_created_and_read_back(self, store: AssistantStore) -> None:
        first = first_version(description="東京 desk")
        made, created = store.create(first)
        assert created and made == store.get(first.assistant_id)
        assert (made.current, made.created_at, made.updated_at, made.newest) == (first, 1.0, 1.0, 1)
        assert store.versions(first.assistant_id) == [first]

    def test_a_taken_id_is_refused_or_given_back(self, store: AssistantStore) -> None:
        first = first_version()
        store.create(first)
        with pytest.raises(AssistantExistsError):
            store.create(dataclasses.replace(first, name="other"))
        kept, created = store.create(dataclasses.replace(first, name="other"), if_exists="do_nothing")
        assert not created and kept.current.name == "kit"
        assert [c.action for c in store.changes(first.assistant_id)] == [CREATE]

    def test_racing_creates_of_one_id_make_one_assistant(self, store: AssistantStore) -> None:
        first = first_version()
        won, refused = race(RACERS, lambda i: store.create(dataclasses.replace(first, name=f"n{i}")),
                            AssistantExistsError)
        assert (len(won), len(refused)) == (1, RACERS - 1)
        assert len(store.versions(first.assistant_id)) == 1

    def test_an_update_adds_a_version_runs_use_and_set_latest_goes_back(self, store: AssistantStore) -> None:
        first = first_version()
        store.create(first)
        second = store.update(first.assistant_id, renamed("second", 2.0))
        assert (second.current.version, second.current.name, second.newest, second.updated_at) == (
            2, "second", 2, 2.0)
        back = store.set_latest(first.assistant_id, 1, by="cy", at=3.0)
        assert (back.current, back.newest, back.updated_at) == (first, 2, 3.0)
        third = store.update(first.assistant_id, renamed("third", 4.0))
        assert third.current.version == 3  # one past the newest, not past the one in use
        assert [v.version for v in store.versions(first.assistant_id)] == [3, 2, 1]

    def test_an_unknown_version_or_assistant_is_refused(self, store: AssistantStore) -> None:
        first = first_version()
        store.create(first)
        with pytest.raises(UnknownVersionError):
            store.set_latest(first.assistant_id, 9, by="cy", at=2.0)
        for call in (lambda: store.get("nobody"), lambda: store.versions("nobody"),
                     lambda: store.update("nobody", renamed("x", 2.0)),
                     lambda: store.set_latest("nobody", 1, by="cy", at=2.0),
                     lambda: store.delete("nobody", by="cy", at=2.0)):
            with pytest.raises(UnknownAssistantError):
                call()

    def test_a_failed_revision_writes_nothing(self, store: AssistantStore) -> None:
        first = first_version()
        store.create(first)

        def refuse(current: Assistant) -> AssistantVersion:
            raise ValueError("no")

        with pytest.raises(ValueError, match="no"):
            store.update(first.assistant_id, refuse)
        assert store.get(first.assistant_id).newest == 1
        assert len(store.changes(first.assistant_id)) == 1

    def test_racing_updates_each_get_a_version_of_their_own(self, store: AssistantStore) -> None:
        first = first_version()
        store.create(first)
        won, _ = race(RACERS, lambda i: store.update(first.assistant_id, renamed(f"n{i}", 2.0 + i)))
        assert sorted(a.current.version for a in won) == list(range(2, RACERS + 2))

    def test_search_finds_by_graph_newest_first(self, store: AssistantStore) -> None:
        older, newer, other = first_version(at=1.0), first_version(at=2.0), first_version("other", at=3.0)
        for version in (older, newer, other):
            store.create(version)
        assert [a.assistant_id for a in store.search("kit-graph")] == [newer.assistant_id, older.assistant_id]
        assert len(store.search()) == 3

    def test_delete_removes_it_and_the_log_keeps_who_changed_what_by_name(
            self, store: AssistantStore) -> None:
        first = first_version()
        store.create(first)
        store.update(first.assistant_id, renamed("second", 2.0))
        store.set_latest(first.assistant_id, 1, by="cy", at=3.0)
        store.delete(first.assistant_id, by="dee", at=4.0)
        with pytest.raises(UnknownAssistantError):
            store.get(first.assistant_id)
        log = store.changes(first.assistant_id)
        assert [(c.action, c.version, c.by, c.at) for c in log] == [
            (CREATE, 1, "ada", 1.0), (UPDATE, 2, "bo", 2.0), (SET_LATEST, 1, "cy", 3.0),
            (DELETE, 1, "dee", 4.0)]
        assert log[0].keys == ["config.configurable.model", "config.tags", "context.tone", "metadata.team"]
        assert "mock/東京" not in repr(log) and "formal" not in repr(log)  # names, never values

    def test_assistants_survive_reopening(self, tmp_path: Path) -> None:
        if not self.durable:
            pytest.skip("this store does not claim durability")
        first = first_version()
        store = self.make_store(tmp_path)
        store.create(first)
        store.close()
        again = self.reopen_store(tmp_path)
        try:
            assert again.get(first.assistant_id).current == first
        finally:
            again.close()
