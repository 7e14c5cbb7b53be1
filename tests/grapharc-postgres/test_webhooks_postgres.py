"""Run webhooks over PostgreSQL: a hook pending when its server is SIGKILLed arrives once after a
restart on the same database, and of two workers serving the database exactly one sends each
hook (the receiver is a real HTTP server on 127.0.0.1)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

SERVER_TESTS = Path(__file__).resolve().parents[1] / "grapharc-server"
sys.path.insert(0, str(SERVER_TESTS))

from webhook_receiver import Receiver, receiving  # noqa: E402
from webhook_stories import (  # noqa: E402
    a_hook_pending_at_a_kill_arrives_once_after_restart,
    a_marker_arrives,
    beside,
    create_run,
    hook_server,
)

RUNS = 6


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receiving() as listening:
        yield listening


def test_a_hook_pending_when_the_server_is_killed_arrives_once_after_a_restart(
        postgres_uri: str, receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    beside(monkeypatch)
    a_hook_pending_at_a_kill_arrives_once_after_restart(receiver, postgres_uri,
                                                        lambda: hook_server(postgres_uri))


def test_of_two_workers_exactly_one_sends_each_hook(postgres_uri: str, receiver: Receiver,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    beside(monkeypatch)
    with ExitStack() as stack:
        urls = [stack.enter_context(hook_server(postgres_uri)).json_announcement()["url"] for _ in range(2)]
        for i in range(RUNS):
            create_run(urls[i % 2], receiver.url(f"/run-{i}"))
        for i in range(RUNS):
            receiver.wait_for(f"/run-{i}")
        for n, url in enumerate(urls):  # each worker has looked at the deliveries again since
            a_marker_arrives(url, receiver, f"/marker-{n}")
        assert [len(receiver.at(f"/run-{i}")) for i in range(RUNS)] == [1] * RUNS
