"""A turn's update subscriber is shown each node's writes after they are saved; one that raises
is dropped for the rest of the turn and cannot fail the node or the turn."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from grapharc.session import SessionManager


class Breaks:
    """A subscriber that records what it is shown and raises on the first node."""

    def __init__(self) -> None:
        self.shown: list[str] = []

    def __call__(self, node: str, update: dict[str, Any]) -> None:
        self.shown.append(node)
        raise RuntimeError("subscriber broke")


def _finished_cleanly(manager: SessionManager, thread_id: str) -> None:
    session = manager.get(thread_id)
    assert session.status == "completed"
    assert manager.values(thread_id)["log"] == ["n1", "n2", "n3", "n4"]
    trail = manager.audit(thread_id)
    assert [e.node for e in trail if e.kind == "node"] == ["n1", "n2", "n3", "n4"]
    assert "failed" not in {e.kind for e in trail}


def test_a_subscriber_that_raises_cannot_fail_a_sync_turn(manager: SessionManager,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    subscriber = Breaks()
    with caplog.at_level(logging.WARNING, logger="grapharc.subscribers"):
        session = manager.start("chain", thread_id="sync-sub", on_update=subscriber)
    assert session.status == "completed"
    assert subscriber.shown == ["n1"]  # dropped after it raised
    assert "subscriber raised on node n1" in caplog.text
    _finished_cleanly(manager, "sync-sub")


def test_a_subscriber_that_raises_cannot_fail_an_async_turn(manager: SessionManager) -> None:
    subscriber = Breaks()

    async def scenario() -> None:
        await manager.astart("chain", thread_id="async-sub", on_update=subscriber)
        await manager.aclose()

    asyncio.run(scenario())
    assert subscriber.shown == ["n1"]
    _finished_cleanly(manager, "async-sub")
