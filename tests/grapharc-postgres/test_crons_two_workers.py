"""Cron schedules on PostgreSQL served by two separate ``grapharc serve`` processes whose
schedulers read one clock the test moves (cron_clock_launcher.py): each slot fires exactly one run,
whichever process claims it, and the schedule made through one process is found through the other."""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client

SERVER_TESTS = Path(__file__).resolve().parents[1] / "grapharc-server"
sys.path.insert(0, str(SERVER_TESTS))

from cron_clock_launcher import launcher, set_clock  # noqa: E402
from server_process import PATIENCE_SECONDS, ServerProcess  # noqa: E402

START = datetime(2030, 1, 7, 8, 0, 30, tzinfo=UTC).timestamp()
MINUTE = 60.0
GRAPH = "required-field"  # api_graphs.py: echoes its required ``customer``
SLOTS = 3
SCHEDULES = 8


@pytest.fixture
def two_servers(postgres_uri: str, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[list[str], Path]]:
    """The URLs of two servers on this test's database, and the clock file both schedulers read."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(SERVER_TESTS), os.environ.get("PYTHONPATH", "")]))
    clock = tmp_path / "clock"
    set_clock(clock, START)
    with ExitStack() as stack:
        started = [stack.enter_context(ServerProcess(launcher(
            clock, "serve", "--port", "0", "--json", "--sessions", postgres_uri,
            "--registry", "api_graphs:register"))) for _ in range(2)]
        yield [server.json_announcement()["url"] for server in started], clock


def runs_of(url: str, thread_id: str) -> list[dict[str, Any]]:
    return get_sync_client(url=url).runs.list(thread_id, limit=100)


def test_each_slot_fires_exactly_one_run_across_two_processes(two_servers) -> None:
    """Several schedules due together keep both schedulers busy firing at once, so a slot claimed
    by both would show as two runs."""
    (first, second), clock = two_servers
    threads = [get_sync_client(url=first).threads.create(graph_id=GRAPH)["thread_id"]
               for _ in range(SCHEDULES)]
    made = [get_sync_client(url=(first, second)[n % 2]).crons.create_for_thread(
        thread, GRAPH, schedule="* * * * *", input={"customer": "ada"}, multitask_strategy="enqueue")
        for n, thread in enumerate(threads)]
    crons = {cron["cron_id"]: cron["thread_id"] for cron in made}
    assert {c["cron_id"] for c in get_sync_client(url=first).crons.search(limit=100)} == set(crons)
    for slot in range(1, SLOTS + 1):
        set_clock(clock, START + slot * MINUTE)
        give_up = time.monotonic() + PATIENCE_SECONDS
        while not all(len(runs_of(first, thread)) >= slot for thread in threads):
            assert time.monotonic() < give_up, f"slot {slot}'s runs did not all start"
            time.sleep(0.1)
    expected = Counter(datetime.fromtimestamp(START - 30 + n * MINUTE, UTC).isoformat(timespec="seconds")
                       for n in range(1, SLOTS + 1))
    for cron_id, thread in crons.items():
        runs = runs_of(second, thread)
        assert Counter(run["metadata"]["cron_slot"] for run in runs) == expected  # each slot once
        assert {run["metadata"]["cron_id"] for run in runs} == {cron_id}
