"""A wrapped checkpointer offers exactly the extended capabilities of the one it wraps, as LangGraph's
conformance suite detects them, and passes them through (the suite itself runs them through the
wrappers in the checkpointer kit)."""

from __future__ import annotations

import asyncio
import copy
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.conformance.capabilities import (
    EXTENDED_CAPABILITIES,
    Capability,
    DetectedCapabilities,
)
from langgraph.checkpoint.conformance.test_utils import (
    generate_checkpoint,
    generate_config,
    generate_metadata,
)
from langgraph.checkpoint.memory import InMemorySaver

from grapharc.runtime.serde import allowlisted
from grapharc.runtime.thread_spend import SpendStampingSaver
from grapharc.runtime.wrapped_saver import offers
from grapharc.session.fencing import FencedSaver, Leases
from grapharc.sqlite.one_trip_saver import OneTripSqliteSaver
from grapharc.sqlite.saver import SqliteCheckpointSaver

SYNC_EXTENDED = ("prune", "delete_for_runs", "copy_thread")


def _extended(saver: BaseCheckpointSaver[Any]) -> tuple[frozenset[Capability], set[str]]:
    """The extended capabilities LangGraph's suite detects (async), and the sync ones offered."""
    detected = DetectedCapabilities.from_instance(saver).detected & EXTENDED_CAPABILITIES
    return detected, {method for method in SYNC_EXTENDED if offers(saver, method)}


def _wrappings(inner: BaseCheckpointSaver[Any]) -> list[BaseCheckpointSaver[Any]]:
    """``inner`` as a session's graph holds it (stamped over fenced), and each wrapper alone."""
    fenced = FencedSaver(inner, Leases(lambda lease: True))
    stamped = SpendStampingSaver(fenced)
    return [fenced, SpendStampingSaver(inner), stamped, allowlisted(stamped, [("pkg", "Kind")]),
            copy.copy(stamped), stamped.rewrap(inner)]


@pytest.fixture
def sync_saver(tmp_path: Path) -> Iterator[SqliteCheckpointSaver]:
    connection = sqlite3.connect(tmp_path / "sync.db", check_same_thread=False)
    yield SqliteCheckpointSaver(connection)
    connection.close()


def test_a_wrapper_of_a_saver_without_extended_capabilities_claims_none():
    for wrapped in _wrappings(InMemorySaver()):
        assert _extended(wrapped) == (frozenset(), set())


def test_a_wrapper_of_a_sync_saver_offers_its_sync_extended_capabilities_only(sync_saver):
    assert _extended(sync_saver) == (frozenset(), set(SYNC_EXTENDED))
    for wrapped in _wrappings(sync_saver):
        assert _extended(wrapped) == (frozenset(), set(SYNC_EXTENDED))
        assert isinstance(wrapped, FencedSaver | SpendStampingSaver)


def test_a_wrapper_of_a_saver_with_every_capability_offers_every_one(tmp_path):
    async def main() -> list[Any]:
        async with OneTripSqliteSaver.open(tmp_path / "async.db") as saver:
            return [_extended(saver), *(_extended(wrapped) for wrapped in _wrappings(saver))]

    inner, *wrapped = asyncio.run(main())
    assert inner == (EXTENDED_CAPABILITIES, set(SYNC_EXTENDED))
    assert wrapped == [inner] * len(wrapped)


def test_the_wrapper_of_one_saver_does_not_lend_its_capabilities_to_the_wrapper_of_another(sync_saver):
    capable, bare = FencedSaver(sync_saver, Leases(lambda lease: True)), SpendStampingSaver(InMemorySaver())
    assert type(capable) is not FencedSaver and type(bare) is SpendStampingSaver
    assert _extended(capable.rewrap(InMemorySaver())) == (frozenset(), set())
    assert type(FencedSaver(sync_saver, capable.leases)) is type(capable)  # one class per set


def test_a_wrapper_passes_each_extended_call_through(sync_saver):
    wrapped = SpendStampingSaver(FencedSaver(sync_saver, Leases(lambda lease: True)))
    for thread, run in (("a", "run-a"), ("b", "run-b")):
        metadata = generate_metadata(run_id=run)
        stored = sync_saver.put(generate_config(thread), generate_checkpoint(), metadata, {})
        sync_saver.put(stored, generate_checkpoint(), generate_metadata(step=1, run_id=run), {})
    wrapped.copy_thread("a", "c")
    wrapped.prune(["a"])
    wrapped.delete_for_runs(["run-b"])
    held = {thread: len(list(sync_saver.list(generate_config(thread)))) for thread in "abc"}
    assert held == {"a": 1, "b": 0, "c": 2}
