"""A thread's past states on PostgreSQL: each checkpoint reads back by id, history pages from a
checkpoint join into the whole history, and an id the thread lacks is refused naming it."""

from __future__ import annotations

import pytest

from grapharc.session.errors import UnknownCheckpointError


def test_past_states_and_history_pages_read_back_on_postgres(manager):
    manager.create("chain", thread_id="t")
    for _ in range(2):
        assert manager.run("t", {}).status == "completed"
    full = manager.history("t")
    ids = [s.config["configurable"]["checkpoint_id"] for s in full]
    for snapshot, checkpoint_id in zip(full, ids, strict=True):
        at = manager.state_at("t", checkpoint_id)
        assert (at.values, at.next, at.metadata) == (snapshot.values, snapshot.next, snapshot.metadata)
    paged: list[str] = []
    while page := manager.history("t", limit=3, before=paged[-1] if paged else None):
        paged += [s.config["configurable"]["checkpoint_id"] for s in page]
    assert paged == ids and len(ids) > 3
    with pytest.raises(UnknownCheckpointError, match="'nope'"):
        manager.state_at("t", "nope")
    with pytest.raises(UnknownCheckpointError, match="'nope'"):
        manager.history("t", before="nope")
