"""The SQLite store's async saver: every call is one trip to the saver's own thread, calls run in
the order they were asked, and a session's lease check runs there, in the write's trip."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.conformance.test_utils import (
    generate_checkpoint,
    generate_config,
    generate_metadata,
)
from langgraph.checkpoint.sqlite import SqliteSaver

from grapharc.checkpoints import SqliteCheckpoints
from grapharc.runtime.threaded_saver import ThreadedSaver
from grapharc.session.errors import LeaseLostError
from grapharc.session.fencing import FencedSaver, Leases, fence
from grapharc.session.lease import Lease

SAVER_THREAD = "grapharc-checkpoints"


def on_saver_thread() -> bool:
    return threading.current_thread().name.startswith(SAVER_THREAD)


def test_each_async_call_runs_the_sync_saver_on_the_saver_thread(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, bool]] = []
    for method in ("put", "put_writes", "get_tuple", "list"):
        original = getattr(SqliteSaver, method)

        def spy(self: Any, *args: Any, _original: Any = original, _name: str = method, **kwargs: Any) -> Any:
            calls.append((_name, on_saver_thread()))
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(SqliteSaver, method, spy)

    async def scenario() -> tuple[Any, list[Any]]:
        async with SqliteCheckpoints(tmp_path / "checkpoints.db").async_saver() as saver:
            stored = await saver.aput(generate_config("t"), generate_checkpoint(), generate_metadata(), {})
            await saver.aput_writes(stored, [("channel", "value")], "task-1")
            return await saver.aget_tuple(generate_config("t")), [t async for t in saver.alist(None)]

    latest, listed = asyncio.run(scenario())
    assert latest is not None and latest.pending_writes == [("task-1", "channel", "value")]
    assert [t.config for t in listed] == [latest.config]
    assert calls == [("put", True), ("put_writes", True), ("get_tuple", True), ("list", True)]


def test_a_read_asked_after_a_write_sees_it_though_neither_was_awaited_first(tmp_path: Path) -> None:
    async def scenario() -> list[Any]:
        async with SqliteCheckpoints(tmp_path / "checkpoints.db").async_saver() as saver:
            stored = await saver.aput(generate_config("t"), generate_checkpoint(), generate_metadata(), {})
            seen = []
            for number in range(20):
                write = asyncio.ensure_future(saver.aput_writes(stored, [("n", number)], f"task-{number}"))
                read = asyncio.ensure_future(saver.aget_tuple(stored))
                await write
                seen.append(await read)
            return seen

    for number, found in enumerate(asyncio.run(scenario())):
        assert found is not None and ("n", number) in [(w[1], w[2]) for w in found.pending_writes]


def test_a_session_fences_the_saver_inside_it_so_check_and_write_share_one_trip(tmp_path: Path) -> None:
    checks: list[bool] = []

    def still_held(lease: Lease) -> bool:
        checks.append(on_saver_thread())
        return lease.token == "current"

    async def scenario() -> None:
        async with SqliteCheckpoints(tmp_path / "checkpoints.db").async_saver() as saver:
            leases = Leases(still_held)
            fenced = fence(saver, leases)
            assert isinstance(fenced, ThreadedSaver) and isinstance(fenced.inner, FencedSaver)
            leases.held["t"] = Lease("t", "runner", "current", 60.0)
            stored = await fenced.aput(generate_config("t"), generate_checkpoint(), generate_metadata(), {})
            leases.held["t"] = Lease("t", "stale-runner", "old", 60.0)
            with pytest.raises(LeaseLostError, match="stale-runner"):
                await fenced.aput_writes(stored, [("channel", "late")], "task-1")
            kept = await saver.aget_tuple(stored)
            assert kept is not None and kept.pending_writes == []

    asyncio.run(scenario())
    assert checks == [True, True]
