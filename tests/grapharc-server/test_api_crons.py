"""Cron schedules over HTTP through the official ``langgraph-sdk`` client (async and sync), on a
real ``grapharc serve`` over SQLite whose scheduler reads a clock the test moves
(cron_clock_launcher.py): made, found, changed and deleted as the SDK asks; refused as a run would
be; fired once per slot, one catch-up run for slots missed, and carried on across a restart; each
run a schedule starts posts the schedule's webhook."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from cron_clock_launcher import launcher, set_clock
from langgraph_sdk import get_client, get_sync_client
from server_process import PATIENCE_SECONDS, ServerProcess
from webhook_receiver import receiving

START = datetime(2030, 1, 7, 8, 0, 30, tzinfo=UTC).timestamp()
"""The schedules' clock when each test begins: half a minute past 08:00 UTC."""
MINUTE = 60.0
GRAPH = "required-field"  # api_graphs.py: echoes its required ``customer``


@contextmanager
def cron_server(sessions: Path, clock: Path, *options: str) -> Iterator[ServerProcess]:
    """A ``grapharc serve`` of api_graphs.py's graphs over ``sessions``, its schedules' clock in ``clock``."""
    with ServerProcess(launcher(clock, "serve", "--port", "0", "--json", "--sessions", str(sessions),
                                "--registry", "api_graphs:register", *options)) as server:
        server.url = server.json_announcement()["url"]  # type: ignore[attr-defined]
        yield server


@pytest.fixture
def clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The schedules' clock file, at ``START``; the server's graphs importable by its process."""
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    path = tmp_path / "clock"
    set_clock(path, START)
    return path


@pytest.fixture
def server(tmp_path: Path, clock: Path) -> Iterator[str]:
    """The URL of a server with a run ceiling of 5 node runs, its schedules on ``clock``."""
    with cron_server(tmp_path / "sessions", clock, "--max-iterations", "5") as served:
        yield served.url  # type: ignore[attr-defined]


def iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds")


def eventually(check: Callable[[], Any], what: str) -> Any:
    """Poll ``check`` until it returns something true (its value), failing after PATIENCE_SECONDS."""
    give_up = time.monotonic() + PATIENCE_SECONDS
    while not (found := check()):
        assert time.monotonic() < give_up, f"gave up waiting for {what}"
        time.sleep(0.1)
    return found


def cron_runs(url: str, thread_id: str, cron_id: str, headers: dict[str, str] | None = None
              ) -> list[dict[str, Any]]:
    """The runs of ``thread_id`` that ``cron_id`` started, by slot (asked with ``headers``): by slot,
    not ``created_at``, which keeps whole seconds, so two slots fired in one second would tie."""
    runs = get_sync_client(url=url, headers=headers).runs.list(thread_id, limit=100)
    return sorted((r for r in runs if r["metadata"].get("cron_id") == cron_id),
                  key=lambda r: r["metadata"]["cron_slot"])


def test_the_async_client_makes_finds_counts_and_deletes_a_schedule(server: str) -> None:
    async def story() -> None:
        client = get_client(url=server)
        cron = await client.crons.create(GRAPH, schedule="*/5 * * * *", input={"customer": "ada"},
                                         metadata={"team": "東京"}, timezone="Europe/Paris")
        assert (cron["assistant_id"], cron["thread_id"], cron["schedule"], cron["timezone"], cron["enabled"],
                cron["metadata"]) == (GRAPH, None, "*/5 * * * *", "Europe/Paris", True, {"team": "東京"})
        assert cron["next_run_date"] == iso(START - 30 + 5 * MINUTE)  # 08:05 UTC, the first slot after now
        assert cron["payload"]["input"] == {"customer": "ada"}
        other = await client.crons.create(GRAPH, schedule="0 9 * * *", input={"customer": "bo"})
        found = await client.crons.search(assistant_id=GRAPH, metadata={"team": "東京"})
        assert [c["cron_id"] for c in found] == [cron["cron_id"]]
        assert await client.crons.count(assistant_id=GRAPH) == 2
        ordered = await client.crons.search(sort_by="next_run_date", sort_order="asc", select=["cron_id"])
        assert ordered == [{"cron_id": cron["cron_id"]}, {"cron_id": other["cron_id"]}]
        await client.crons.delete(cron["cron_id"])
        assert [c["cron_id"] for c in await client.crons.search()] == [other["cron_id"]]
        with pytest.raises(httpx.HTTPStatusError) as gone:
            await client.crons.delete(cron["cron_id"])
        assert gone.value.response.status_code == 404
        assert cron["cron_id"] in gone.value.response.json()["detail"]

    asyncio.run(story())


def test_the_sync_client_schedules_a_thread_and_changes_its_schedule(server: str) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create(graph_id=GRAPH)
    cron = client.crons.create_for_thread(thread["thread_id"], GRAPH, schedule="0 * * * *",
                                          input={"customer": "ada"}, multitask_strategy="enqueue")
    assert cron["thread_id"] == thread["thread_id"] and cron["next_run_date"] == iso(START - 30 + 60 * MINUTE)
    assert [c["cron_id"] for c in client.crons.search(thread_id=thread["thread_id"])] == [cron["cron_id"]]
    changed = client.crons.update(cron["cron_id"], schedule="*/10 * * * *", enabled=False,
                                  input={"customer": "bo"})
    seen = (changed["schedule"], changed["enabled"], changed["payload"]["input"], changed["next_run_date"])
    assert seen == ("*/10 * * * *", False, {"customer": "bo"}, iso(START - 30 + 10 * MINUTE))
    assert client.crons.search(enabled=True) == [] and client.crons.count(thread_id=thread["thread_id"]) == 1
    ended = client.crons.update(cron["cron_id"], enabled=True, end_time=datetime.fromtimestamp(START, UTC))
    assert (ended["end_time"], ended["next_run_date"]) == (iso(START), None)  # no slot before its end
    reopened = client.crons.update(cron["cron_id"], end_time=None)
    assert (reopened["end_time"], reopened["next_run_date"]) == (None, iso(START - 30 + 10 * MINUTE))
    client.crons.delete(cron["cron_id"])
    assert client.crons.search() == []


def refusal(call: Callable[[], Any]) -> dict[str, Any]:
    """The problem document ``call`` was refused with."""
    with pytest.raises(httpx.HTTPStatusError) as refused:
        call()
    return {"status": refused.value.response.status_code, **refused.value.response.json()}


def test_a_bad_expression_or_zone_is_a_422_naming_it(server: str) -> None:
    client = get_sync_client(url=server)
    bad = refusal(lambda: client.crons.create(GRAPH, schedule="every tuesday", input={"customer": "a"}))
    assert bad["status"] == 422 and "'every tuesday'" in bad["detail"]
    nowhere = refusal(lambda: client.crons.create(GRAPH, schedule="* * * * *", input={"customer": "a"},
                                                  timezone="Mars/Olympus"))
    assert nowhere["status"] == 422 and "'Mars/Olympus'" in nowhere["detail"]
    no_thread = refusal(lambda: client.crons.create_for_thread("no-such-thread", GRAPH, schedule="* * * * *",
                                                               input={"customer": "a"}))
    assert no_thread["status"] == 404 and "'no-such-thread'" in no_thread["detail"]
    assert client.crons.search() == []


def test_a_schedule_whose_run_would_be_refused_is_refused_with_the_runs_message(server: str) -> None:
    client = get_sync_client(url=server)
    for asked in ({"input": {}},  # the graph's required customer is missing
                  {"input": {"customer": "a"}, "assistant_id": "no-such-graph"},
                  {"input": {"customer": "a"}, "budget": {"max_iterations": 50}},  # above the ceiling
                  {"input": {"customer": "a"}, "stream_mode": "no-such-mode"}):
        body = {"assistant_id": GRAPH, **asked}
        as_run = refusal(lambda: client.http.post("/runs", json=body))  # noqa: B023 -- called at once
        as_cron = refusal(lambda: client.http.post("/runs/crons", json={**body, "schedule": "* * * * *"}))  # noqa: B023
        assert as_cron["status"] == as_run["status"] >= 400
        assert as_cron["detail"] == as_run["detail"]
    assert client.crons.search() == []


def test_a_thread_schedule_fires_once_per_slot_with_its_cron_id_in_the_runs_metadata(
        server: str, clock: Path) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create(graph_id=GRAPH)
    cron = client.crons.create_for_thread(thread["thread_id"], GRAPH, schedule="* * * * *",
                                          input={"customer": "ada"}, multitask_strategy="enqueue")
    for minute in (1, 2):
        set_clock(clock, START + minute * MINUTE)
        runs = eventually(lambda m=minute: len(found := cron_runs(server, thread["thread_id"],
                                                                    cron["cron_id"])) == m and found,
                          f"the run of slot {minute}")
        assert runs[-1]["metadata"]["cron_slot"] == iso(START - 30 + minute * MINUTE)
    client.runs.join(thread["thread_id"], runs[-1]["run_id"])
    assert client.threads.get_state(thread["thread_id"])["values"]["echoed"] == "ada"
    assert client.crons.search()[0]["next_run_date"] == iso(START - 30 + 3 * MINUTE)


def test_slots_missed_while_time_moved_on_are_one_catch_up_run(server: str, clock: Path) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create(graph_id=GRAPH)
    cron = client.crons.create_for_thread(thread["thread_id"], GRAPH, schedule="* * * * *",
                                          input={"customer": "ada"}, multitask_strategy="enqueue")
    set_clock(clock, START + 10 * MINUTE)  # ten slots passed
    eventually(lambda: cron_runs(server, thread["thread_id"], cron["cron_id"]), "the catch-up run")
    # the next slot is the first after the moved clock: no further slot is due until it moves again
    assert client.crons.search()[0]["next_run_date"] == iso(START - 30 + 11 * MINUTE)
    assert len(cron_runs(server, thread["thread_id"], cron["cron_id"])) == 1


def test_a_stateless_schedule_runs_on_a_new_thread_each_slot(server: str, clock: Path) -> None:
    client = get_sync_client(url=server)
    cron = client.crons.create(GRAPH, schedule="* * * * *", input={"customer": "bo"}, on_run_completed="keep")
    set_clock(clock, START + MINUTE)

    def fired() -> list[dict[str, Any]]:
        return [run for thread in client.threads.search(limit=100)
                for run in cron_runs(server, thread["thread_id"], cron["cron_id"])]

    [run] = eventually(fired, "the stateless run")
    client.runs.join(run["thread_id"], run["run_id"])
    assert client.threads.get_state(run["thread_id"])["values"]["echoed"] == "bo"


def test_a_schedule_carries_on_across_a_restart_from_its_stored_slot(tmp_path: Path, clock: Path) -> None:
    sessions = tmp_path / "sessions"
    with cron_server(sessions, clock) as first:
        client = get_sync_client(url=first.url)  # type: ignore[attr-defined]
        thread = client.threads.create(graph_id=GRAPH)
        cron = client.crons.create_for_thread(thread["thread_id"], GRAPH, schedule="*/5 * * * *",
                                              input={"customer": "ada"})
        first.send(signal.SIGTERM)
        assert first.wait() == 0
    set_clock(clock, START + 5 * MINUTE)  # the slot came while no server ran
    with cron_server(sessions, clock) as second:
        url = second.url  # type: ignore[attr-defined]
        [run] = eventually(lambda: cron_runs(url, thread["thread_id"], cron["cron_id"]), "the slot's run")
        assert run["metadata"]["cron_slot"] == iso(START - 30 + 5 * MINUTE)
        assert get_sync_client(url=url).crons.search()[0]["next_run_date"] == iso(START - 30 + 10 * MINUTE)


def test_a_schedule_added_on_the_command_line_is_fired_by_the_server(tmp_path: Path, clock: Path) -> None:
    with cron_server(tmp_path / "sessions", clock) as served:
        url = served.url  # type: ignore[attr-defined]
        thread = get_sync_client(url=url).threads.create(graph_id=GRAPH)["thread_id"]
        added = subprocess.run([sys.executable, "-m", "grapharc.cli", "cron", "add", "--assistant", GRAPH,
                                "--schedule", "* * * * *", "--thread", thread, "--input",
                                '{"customer": "cy"}', "--sessions", str(tmp_path / "sessions"), "--json"],
                               capture_output=True, text=True, timeout=PATIENCE_SECONDS)
        assert added.returncode == 0, added.stderr
        cron = json.loads(added.stdout)  # its first slot is the next minute of the wall clock
        set_clock(clock, time.time() + 2 * MINUTE)
        [run] = eventually(lambda: cron_runs(url, thread, cron["cron_id"]), "the CLI's schedule's run")
        assert run["metadata"]["cron_slot"] == cron["next_run_date"]


def test_a_slot_on_a_thread_busy_under_reject_is_skipped_and_the_next_slot_runs(
        tmp_path: Path, clock: Path) -> None:
    release = tmp_path / "release"
    with cron_server(tmp_path / "sessions", clock) as served:
        url = served.url  # type: ignore[attr-defined]
        client = get_sync_client(url=url)
        thread = client.threads.create(graph_id="waiter")["thread_id"]
        busy = client.runs.create(thread, "waiter", input={"release_file": str(release)})
        cron = client.crons.create_for_thread(thread, "waiter", schedule="* * * * *",
                                              input={"release_file": str(release)})  # reject, the default
        set_clock(clock, START + MINUTE)
        skipped = served.stderr_line_containing(f"cron {cron['cron_id']} did not start its run")
        assert f"for {iso(START - 30 + MINUTE)}: thread {thread} is busy" in skipped
        assert [r["run_id"] for r in client.runs.list(thread)] == [busy["run_id"]]
        release.touch()
        client.runs.join(thread, busy["run_id"])
        set_clock(clock, START + 2 * MINUTE)
        served.stderr_line_containing(f"cron {cron['cron_id']} started run")
        [run] = cron_runs(url, thread, cron["cron_id"])
        assert run["metadata"]["cron_slot"] == iso(START - 30 + 2 * MINUTE)


def test_with_an_auth_file_schedules_are_their_creators_and_checked_against_their_grants(
        tmp_path: Path, clock: Path) -> None:
    from authz_setup import TOKENS, auth_file_text

    auth = tmp_path / "auth.toml"
    auth.write_text(auth_file_text(), encoding="utf-8")
    with cron_server(tmp_path / "sessions", clock, "--auth-file", str(auth)) as served:
        url = served.url  # type: ignore[attr-defined]

        bearer = {name: {"Authorization": f"Bearer {TOKENS[name]}"} for name in ("alice", "dave")}
        alice, dave = (get_sync_client(url=url, headers=bearer[name]) for name in ("alice", "dave"))
        cron = alice.crons.create("credit-approval", schedule="* * * * *",
                                  input={"application_id": "LN-2204"}, on_run_completed="keep")
        assert cron["user_id"] == "alice"
        assert dave.crons.search() == [] and dave.crons.count() == 0
        assert refusal(lambda: dave.crons.delete(cron["cron_id"]))["status"] == 404
        body = {"assistant_id": "waiter", "input": {}}
        as_run = refusal(lambda: dave.http.post("/runs", json=body))
        as_cron = refusal(lambda: dave.http.post("/runs/crons", json={**body, "schedule": "* * * * *"}))
        assert as_cron["status"] == as_run["status"] == 403 and as_cron["detail"] == as_run["detail"]
        set_clock(clock, START + MINUTE)
        line = served.stderr_line_containing(f"cron {cron['cron_id']} started run")
        thread = line.split(" on thread ")[1].split(" ")[0]
        [run] = cron_runs(url, thread, cron["cron_id"], bearer["alice"])
        assert run["metadata"]["created_by"] == "alice"
        assert [c["cron_id"] for c in alice.crons.search()] == [cron["cron_id"]]


def test_a_schedule_whose_thread_was_deleted_goes_at_its_next_slot(server: str, clock: Path) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create(graph_id=GRAPH)["thread_id"]
    doomed = client.crons.create_for_thread(thread, GRAPH, schedule="* * * * *", input={"customer": "ada"})
    kept = client.crons.create(GRAPH, schedule="0 0 1 1 *", input={"customer": "bo"})
    assert {c["cron_id"] for c in client.crons.search()} == {doomed["cron_id"], kept["cron_id"]}
    client.threads.delete(thread)
    set_clock(clock, START + MINUTE)
    eventually(lambda: [c["cron_id"] for c in client.crons.search()] == [kept["cron_id"]],
               "the schedule of the deleted thread to go")


def test_each_run_a_schedule_starts_posts_the_schedules_webhook(server: str, clock: Path) -> None:
    with receiving() as receiver:
        client = get_sync_client(url=server)
        thread = client.threads.create(graph_id=GRAPH)
        cron = client.crons.create_for_thread(thread["thread_id"], GRAPH, schedule="* * * * *",
                                              input={"customer": "ada"}, multitask_strategy="enqueue",
                                              webhook=receiver.url("/cron"))
        for minute in (1, 2):
            set_clock(clock, START + minute * MINUTE)
            hooks = receiver.wait_for("/cron", minute)
        posted = [hook.json() for hook in hooks]
        runs = cron_runs(server, thread["thread_id"], cron["cron_id"])
        assert sorted(body["run_id"] for body in posted) == sorted(run["run_id"] for run in runs)
        assert {body["metadata"]["cron_id"] for body in posted} == {cron["cron_id"]}
        assert {body["status"] for body in posted} == {"success"}
