"""The SQLite checkpointer provider: the checkpointer kit (LangGraph's own suite included) through the
store hook, and what only SQLite has (a directory or a file per location, refusals of unusable files)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from grapharc.sqlite.checkpoints import CheckpointStoreError, SqliteCheckpoints
from grapharc.stores import open_store
from grapharc.testing.checkpointer_kit import CheckpointerConformance


class TestSqliteCheckpointsConformance(CheckpointerConformance):
    """The kit against ``sqlite:DIR`` opened through the store hook, including close-and-reopen."""

    durable = True

    def make_provider(self, tmp_path: Path) -> SqliteCheckpoints:
        return open_store(f"sqlite:{tmp_path}/sessions", kind="checkpoints")

    def session_location(self, tmp_path: Path) -> str:
        return f"sqlite:{tmp_path}/sessions"


@pytest.mark.parametrize(("location", "file"), [("layer", "layer/checkpoints.db"), ("one.db", "one.db")])
def test_a_directory_holds_checkpoints_db_and_a_name_with_a_suffix_is_the_file(tmp_path, location, file):
    provider = open_store(f"sqlite:{tmp_path}/{location}", kind="checkpoints")
    provider.saver()
    assert provider.path == tmp_path / file and provider.path.is_file()
    provider.close()


def test_a_location_under_a_file_is_refused_before_anything_is_written(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    with pytest.raises(CheckpointStoreError, match="blocker is a file, not a directory"):
        open_store(f"sqlite:{blocker}", kind="checkpoints")
    assert blocker.read_text() == "not a directory"


def test_a_file_that_is_not_a_database_is_refused_by_both_savers(tmp_path):
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not SQLite " * 100)
    provider = open_store(f"sqlite:{garbage}", kind="checkpoints")
    with pytest.raises(CheckpointStoreError, match=r"cannot use .*garbage\.db as a checkpoint store"):
        provider.saver()

    async def open_async() -> None:
        async with provider.async_saver():
            pass

    with pytest.raises(CheckpointStoreError, match=r"cannot use .*garbage\.db as a checkpoint store"):
        asyncio.run(open_async())
    assert garbage.read_bytes() == b"this is not SQLite " * 100


def test_both_savers_commit_in_wal_mode_with_synchronous_normal(tmp_path):
    """A stated decision (``grapharc.sqlite.saver``): no fsync per commit, never a corrupt file."""
    provider = open_store(f"sqlite:{tmp_path}/sessions", kind="checkpoints")
    connection = provider.saver().conn
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert connection.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL

    async def async_synchronous() -> int:
        async with provider.async_saver() as saver:
            return int(await saver.thread.run(lambda: saver.conn.execute("PRAGMA synchronous").fetchone()[0]))

    assert asyncio.run(async_synchronous()) == 1
    provider.close()
