"""The long-term store over HTTP on PostgreSQL: two ``grapharc serve`` processes on one database
(the store defaults to the sessions' database), the SDK's calls alternating between them, so what
one writes the other reads, searches, lists and expires (store_stories.py tells the stories)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from langgraph_sdk import get_client, get_sync_client

SERVER_TESTS = Path(__file__).resolve().parents[1] / "grapharc-server"
sys.path.insert(0, str(SERVER_TESTS))

from sdk_stories import Alternating  # noqa: E402
from server_process import ServerProcess, grapharc_serve  # noqa: E402
from store_stories import Synced, items_expire, put_get_search_delete  # noqa: E402


@pytest.fixture
def two_servers(postgres_uri: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The URLs of two servers of this test's database, each with its own store connections."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(SERVER_TESTS), os.environ.get("PYTHONPATH", "")]))
    with ExitStack() as stack:
        started = [stack.enter_context(ServerProcess(grapharc_serve(
            "--port", "0", "--json", "--sessions", postgres_uri))) for _ in range(2)]
        announced = [server.json_announcement() for server in started]
        assert {found["store"] for found in announced} == {postgres_uri}
        yield [found["url"] for found in announced]


def test_the_store_is_shared_by_two_servers_on_one_database(two_servers: list[str]) -> None:
    asyncio.run(put_get_search_delete(Alternating(*(get_client(url=url) for url in two_servers)), "async"))
    asyncio.run(put_get_search_delete(Alternating(*(Synced(get_sync_client(url=url)) for url in two_servers)),
                                      "sync"))
    asyncio.run(items_expire(Alternating(*(get_client(url=url) for url in two_servers)), "ttl"))
