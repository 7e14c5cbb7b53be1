"""Assistants created over HTTP on PostgreSQL, through the official ``langgraph-sdk`` client with
calls alternating between two workers on one database: what one worker creates, versions or
deletes the other reads and runs (assistant_stories.py tells the stories; migration 7 holds them)."""

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

from assistant_stories import CEILING, all_stories  # noqa: E402
from sdk_stories import Alternating  # noqa: E402
from server_process import ServerProcess, grapharc_serve  # noqa: E402


@pytest.fixture
def two_workers(postgres_uri: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Alternating, str]]:
    """An SDK client whose calls alternate between two workers on this test's database, and the
    first worker's URL."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(SERVER_TESTS), os.environ.get("PYTHONPATH", "")]))
    with ExitStack() as stack:
        started = [stack.enter_context(ServerProcess(grapharc_serve(
            "--port", "0", "--json", "--sessions", postgres_uri, "--registry", "api_graphs:register",
            "--registry", "config_graphs:register_configured", "--max-iterations", str(CEILING))))
            for _ in range(2)]
        urls = [server.json_announcement()["url"] for server in started]
        yield Alternating(*(get_client(url=url) for url in urls)), urls[0]


def test_assistants_hold_across_two_workers_on_postgresql(two_workers, tmp_path: Path) -> None:
    client, url = two_workers
    asyncio.run(all_stories(client, url, tmp_path / "release"))
