"""``threads.prune`` on PostgreSQL through the official ``langgraph-sdk`` client, its calls
alternating between two workers on one database (prune_stories.py tells the stories): keep_latest
through LangGraph's Postgres saver, delete, unknown ids, and the refusals of a thread in flight or
waiting on an approval and of bad input."""

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

from prune_stories import (  # noqa: E402
    keep_latest_then_delete,
    refuse_bad_input,
    refuse_busy_and_waiting_threads,
)
from sdk_stories import Alternating  # noqa: E402
from server_process import ServerProcess, grapharc_serve  # noqa: E402


@pytest.fixture
def two_workers(postgres_uri: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Alternating, str]]:
    """An SDK client whose calls alternate between two workers on this test's database, and the
    first worker's URL (to read a thread's trail)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(SERVER_TESTS), os.environ.get("PYTHONPATH", "")]))
    with ExitStack() as stack:
        urls = [stack.enter_context(ServerProcess(grapharc_serve(
            "--port", "0", "--json", "--sessions", postgres_uri, "--registry", "api_graphs:register")))
            .json_announcement()["url"] for _ in range(2)]
        yield Alternating(*(get_client(url=url) for url in urls)), urls[0]


def test_threads_prune_keeps_the_latest_or_deletes_and_refuses_as_on_sqlite(two_workers, tmp_path) -> None:
    client, url = two_workers

    async def stories() -> None:
        await keep_latest_then_delete(client, url, tmp_path / "release")
        await refuse_busy_and_waiting_threads(client, tmp_path / "second-release")
        await refuse_bad_input(client, tmp_path / "third-release")

    asyncio.run(stories())
