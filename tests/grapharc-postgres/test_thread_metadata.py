"""A thread's own metadata and runs put off with ``after_seconds`` on PostgreSQL, through the official
``langgraph-sdk`` client with calls alternating between two workers on one database: metadata one
worker keeps the other merges into and finds; a run one worker queued for later is held by both
until its time (thread_metadata_stories.py tells the stories)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from langgraph_sdk import get_client

SERVER_TESTS = Path(__file__).resolve().parents[1] / "grapharc-server"
sys.path.insert(0, str(SERVER_TESTS))

from sdk_stories import Alternating  # noqa: E402
from server_process import ServerProcess, grapharc_serve  # noqa: E402
from thread_metadata_stories import (  # noqa: E402
    delay_a_run_with_after_seconds,
    keep_merge_search_and_sort_metadata,
    refuse_graphs_keys_and_oversized_metadata,
)


@pytest.fixture
def two_workers(postgres_uri: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Alternating]:
    """An SDK client whose calls alternate between two workers on this test's database."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(SERVER_TESTS), os.environ.get("PYTHONPATH", "")]))
    with ExitStack() as stack:
        started = [stack.enter_context(ServerProcess(grapharc_serve(
            "--port", "0", "--json", "--sessions", postgres_uri, "--registry", "api_graphs:register")))
            for _ in range(2)]
        yield Alternating(*(get_client(url=server.json_announcement()["url"]) for server in started))


def test_thread_metadata_and_delayed_runs_hold_across_two_workers_on_postgresql(two_workers) -> None:
    async def stories() -> None:
        await keep_merge_search_and_sort_metadata(two_workers)
        await refuse_graphs_keys_and_oversized_metadata(two_workers)
        await delay_a_run_with_after_seconds(two_workers)

    asyncio.run(stories())
