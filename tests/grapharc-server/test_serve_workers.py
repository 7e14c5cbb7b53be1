"""``grapharc serve --workers N``: N processes serve the API on one port under a supervisor that
announces them, passes a stop on to them, replaces one that dies and takes them down with it."""

from __future__ import annotations

import json
import os
import queue
import signal
import sqlite3
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_graphs import RELAY, WAITER
from server_process import PATIENCE_SECONDS, ServerProcess, grapharc_serve, sse_events

STEADY_AFTER_A_FIFTH = "import grapharc.server.processes as p; p.STEADY_SECONDS = 0.2"
"""A worker is replaced once it has lived 0.2 s (not the default ten seconds)."""
ALLOW_EVERYTHING = ('version = "workers-1"\n[[rules]]\nid = "edges"\nresource = "edge"\naction = "allow"\n'
                    '[[rules]]\nid = "kinds"\nresource = "node"\naction = "allow"\n')
"""A policy admitting every proposal: the governed assistant's loop reaches its goal in one round."""
POLL_HOURLY = "import grapharc.server.api.streaming as s; s.POLL_SECONDS = 3600.0"
"""A stream reads another worker's run again only after an hour unless it is woken."""


def _serve(tmp_path: Path, *options: str, setup: str = "") -> list[str]:
    """``grapharc serve`` with the API graphs over sessions in ``tmp_path``, after ``setup`` (Python
    run first in the server's process)."""
    arguments = ["--port", "0", "--json", "--sessions", str(tmp_path / "sessions"),
                 "--registry", "api_graphs:register", *options]
    if not setup:
        return grapharc_serve(*arguments)
    return [sys.executable, "-c", f"import sys; {setup}; from grapharc.cli.main import run; "
            "sys.exit(run(sys.argv[1:]))", "serve", *arguments]


@pytest.fixture(autouse=True)
def _api_graphs_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))


def _parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie nobody reaped has ended too)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _until(condition: Any) -> None:
    deadline = time.monotonic() + PATIENCE_SECONDS
    while not condition():
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(0.05)


def _writable(sessions: Path) -> bool:
    """Whether no process holds a write lock on the sessions' SQLite files right now."""
    for database in sessions.glob("*.db"):
        with closing(sqlite3.connect(database, timeout=0, isolation_level=None)) as connection:
            try:
                connection.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError:
                return False
            connection.execute("ROLLBACK")
    return True


@contextmanager
def _stopped(pids: list[int], sessions: Path) -> Iterator[None]:
    """``pids`` paused (SIGSTOP) for the block, so only the other workers accept and claim; paused
    again if they were in the middle of a write (a paused writer would lock the others out)."""
    while True:
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        if _writable(sessions):
            break
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
        time.sleep(0.01)
    try:
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


def _runner_pid(client: httpx.Client, release: Path) -> int:
    """Run the waiter (already released) to its end; the pid of the process whose turn ran it."""
    thread = client.post("/threads", json={"metadata": {"graph_id": WAITER}}).json()["thread_id"]
    done = client.post(f"/threads/{thread}/runs/wait",
                       json={"assistant_id": WAITER, "input": {"release_file": str(release)}})
    assert done.status_code == 200 and done.json()["released"] is True, done.text
    return _claimed_by(client, thread)


def _claimed_by(client: httpx.Client, thread: str) -> int:
    """The pid of the process whose turn ran the thread's only run."""
    trace = [json.loads(line) for line in client.get(f"/threads/{thread}/trace").text.splitlines()]
    (claimed,) = [entry for entry in trace if entry["kind"] == "claimed"]
    return int(claimed["detail"]["runner"].split(":")[1])


def test_each_worker_serves_the_api_and_runs_what_it_is_asked(tmp_path: Path) -> None:
    release = tmp_path / "release"
    release.touch()
    with ServerProcess(_serve(tmp_path, "--workers", "2")) as server:
        announced = server.json_announcement()
        workers = announced["workers"]
        assert len(set(workers)) == 2 and announced["pid"] == server.process.pid
        assert all(_parent_of(pid) == server.process.pid and os.getpgid(pid) == pid for pid in workers)
        ran_by = []
        for worker in workers:  # the other paused: this one alone accepts, claims and runs
            with _stopped([pid for pid in workers if pid != worker], tmp_path / "sessions"), \
                    httpx.Client(base_url=announced["url"], timeout=PATIENCE_SECONDS) as client:
                ran_by.append(_runner_pid(client, release))
        assert ran_by == workers
        server.send(signal.SIGTERM)
        assert server.wait() == 0
    assert server.stderr.count("stopped: every request finished") == 2
    assert "Traceback" not in server.stderr


def test_a_stream_on_one_worker_is_woken_by_the_run_another_executes(tmp_path: Path) -> None:
    """The stream polls another worker's run hourly here: the run's later events reach it only
    because the worker executing it tells its sibling which thread moved on."""
    release = tmp_path / "release"
    sessions = tmp_path / "sessions"
    with ThreadPoolExecutor(1) as pool, \
            ServerProcess(_serve(tmp_path, "--workers", "2", setup=POLL_HOURLY)) as server:
        announced = server.json_announcement()
        streamer, executor = announced["workers"]
        with _stopped([streamer], sessions), httpx.Client(base_url=announced["url"], timeout=60) as client:
            thread = client.post("/threads", json={"metadata": {"graph_id": RELAY}}).json()["thread_id"]
            run = client.post(f"/threads/{thread}/runs", json={
                "assistant_id": RELAY, "input": {"release_file": str(release)},
                "stream_mode": ["updates"]}).json()["run_id"]
            _until(lambda: "first_leg" in client.get(f"/threads/{thread}/trace").text)
        seen: queue.Queue[str] = queue.Queue()

        def stream() -> list[dict[str, str]]:
            with httpx.stream("GET", f"{announced['url']}/threads/{thread}/runs/{run}/stream",
                              timeout=PATIENCE_SECONDS) as response:
                text = ""
                for line in response.iter_lines():
                    text += line + "\n"
                    seen.put(line)
            return sse_events(text)

        with _stopped([executor], sessions):
            events = pool.submit(stream)
            while "first_leg" not in seen.get(timeout=PATIENCE_SECONDS):
                pass  # the stream has sent what the run did so far, and waits
        release.touch()
        sent = events.result(timeout=PATIENCE_SECONDS)  # heartbeats keep an unwoken stream open
        trace = httpx.get(f"{announced['url']}/threads/{thread}/trace").text.splitlines()
        server.send(signal.SIGTERM)
        assert server.wait() == 0
    (claimed,) = [entry for entry in map(json.loads, trace) if entry["kind"] == "claimed"]
    assert int(claimed["detail"]["runner"].split(":")[1]) == executor
    assert [json.loads(e["data"]) for e in sent if e["event"] == "updates"] == [
        {"first_leg": {"legs": ["first"]}}, {"middle_leg": {"legs": ["first", "middle"]}},
        {"last_leg": {"legs": ["first", "middle", "last"], "released": True}}]
    assert sent[-1]["event"] == "end" and json.loads(sent[-1]["data"])["status"] == "success"


def test_a_stop_drains_the_request_in_flight_on_a_worker_then_exits_0(tmp_path: Path) -> None:
    release = tmp_path / "release"
    with ServerProcess(_serve(tmp_path, "--workers", "2")) as server, ThreadPoolExecutor(1) as pool:
        url = server.json_announcement()["url"]
        with httpx.Client(base_url=url, timeout=PATIENCE_SECONDS) as client:
            thread = client.post("/threads", json={"metadata": {"graph_id": WAITER}}).json()["thread_id"]
        waiting = pool.submit(httpx.post, f"{url}/threads/{thread}/runs/wait", timeout=PATIENCE_SECONDS,
                              json={"assistant_id": WAITER, "input": {"release_file": str(release)}})
        _until(lambda: httpx.get(f"{url}/threads/{thread}").json()["status"] == "busy")
        server.send(signal.SIGTERM)
        assert "1 request in flight" in server.stderr_line_containing("request in flight")
        release.touch()
        assert waiting.result().json()["released"] is True
        assert server.wait() == 0


def test_ctrl_c_reaches_the_supervisor_alone_which_passes_one_stop_on(tmp_path: Path) -> None:
    """A terminal's Ctrl+C signals the whole foreground group: were the workers in it, each would
    see the SIGINT and then the supervisor's SIGTERM, a second signal, and stop at once (exit 1)."""
    with ServerProcess(_serve(tmp_path, "--workers", "2"), own_group=True) as server:
        server.json_announcement()
        os.killpg(server.process.pid, signal.SIGINT)
        assert server.wait() == 0
    assert server.stderr.count("SIGTERM: stopping") == 2 and "stopped without finishing" not in server.stderr


def test_the_workers_stop_when_their_supervisor_is_killed(tmp_path: Path) -> None:
    with ServerProcess(_serve(tmp_path, "--workers", "2")) as server:
        workers = server.json_announcement()["workers"]
        server.process.kill()
        server.wait()
        _until(lambda: all(_gone(pid) for pid in workers))
    assert server.stderr.count("the supervisor is gone: stopping") == 2


def test_a_worker_that_dies_is_replaced_and_the_server_goes_on(tmp_path: Path) -> None:
    release = tmp_path / "release"
    release.touch()
    with ServerProcess(_serve(tmp_path, "--workers", "2", setup=STEADY_AFTER_A_FIFTH)) as server:
        announced = server.json_announcement()
        dead, survivor = announced["workers"]
        time.sleep(0.5)  # past STEADY_SECONDS: the worker is replaced, not taken for a crash at start
        os.kill(dead, signal.SIGKILL)
        assert "killed by SIGKILL" in server.stderr_line_containing(f"worker {dead} exited")
        replacement = int(server.stderr_line_containing("started in its place").split()[2])
        assert replacement not in (dead, survivor) and _parent_of(replacement) == server.process.pid
        with _stopped([survivor], tmp_path / "sessions"), \
                httpx.Client(base_url=announced["url"], timeout=PATIENCE_SECONDS) as client:
            assert _runner_pid(client, release) == replacement
        server.send(signal.SIGTERM)
        assert server.wait() == 0


def test_a_worker_that_dies_just_after_starting_stops_the_server_with_exit_1(tmp_path: Path) -> None:
    with ServerProcess(_serve(tmp_path, "--workers", "2")) as server:
        dead, survivor = server.json_announcement()["workers"]
        os.kill(dead, signal.SIGKILL)
        assert server.wait() == 1
        assert _gone(survivor)
    assert f"worker {dead} exited (killed by SIGKILL)" in server.stderr
    assert "would die again: stopping" in server.stderr
    assert "stopped: every request finished" in server.stderr  # the survivor drained


def test_a_bad_registry_is_refused_before_any_worker_starts(tmp_path: Path) -> None:
    command = _serve(tmp_path, "--workers", "2")
    command[command.index("api_graphs:register")] = "no_such_module:register"
    with ServerProcess(command) as server:
        assert server.wait() == 2
    error = json.loads(server.stdout)["error"]
    assert error["code"] == "RegistryError" and "no_such_module" in error["message"]
    assert "worker" not in server.stderr and "Traceback" not in server.stderr


@pytest.mark.parametrize("count", ["0", "257", "two"])
def test_a_worker_count_out_of_range_is_a_usage_error_naming_the_option(tmp_path: Path, count: str) -> None:
    with ServerProcess(_serve(tmp_path, "--workers", count)) as server:
        assert server.wait() == 2
    error = json.loads(server.stdout)["error"]
    assert error["code"] == "UsageError" and "--workers" in error["message"]
    assert "from 1 to 256" in error["message"]


def test_the_governed_assistant_runs_on_each_worker_into_one_trace_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = tmp_path / "governed.jsonl"
    monkeypatch.setenv("GRAPHARC_TRACE", str(trace))
    policy = tmp_path / "policy.toml"
    policy.write_text(ALLOW_EVERYTHING)
    with ServerProcess(_serve(tmp_path, "--workers", "2", "--policy", str(policy))) as server:
        announced = server.json_announcement()
        assert announced["governed"]["assistant_id"] == "governed"
        ran_by, threads = [], []
        for worker in announced["workers"]:  # the other paused: this one alone runs the loop
            with _stopped([pid for pid in announced["workers"] if pid != worker], tmp_path / "sessions"), \
                    httpx.Client(base_url=announced["url"], timeout=PATIENCE_SECONDS) as client:
                created = client.post("/threads", json={"metadata": {"graph_id": "governed"}})
                thread = created.json()["thread_id"]
                done = client.post(f"/threads/{thread}/runs/wait",
                                   json={"assistant_id": "governed", "input": {"goal": "fix the outage"}})
                assert done.status_code == 200 and done.json()["stop"] == "goal_met", done.text
                ran_by.append(_claimed_by(client, thread))
                threads.append(thread)
        assert ran_by == announced["workers"]
        server.send(signal.SIGTERM)
        assert server.wait() == 0
    events = [json.loads(line) for line in trace.read_text().splitlines()]  # every line whole
    decided = [event["thread_id"] for event in events if event.get("action") == "decision"]
    assert list(dict.fromkeys(decided)) == threads  # each worker's run decided, in the one file


def test_a_governed_trace_file_that_cannot_be_opened_is_refused_before_any_worker_starts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHARC_TRACE", str(tmp_path))  # a directory
    policy = tmp_path / "policy.toml"
    policy.write_text(ALLOW_EVERYTHING)
    with ServerProcess(_serve(tmp_path, "--workers", "2", "--policy", str(policy))) as server:
        assert server.wait() == 2
    error = json.loads(server.stdout)["error"]  # the trace's own error, as with one process
    assert error["code"] == "TraceOpenError" and str(tmp_path) in error["message"]
    assert "Traceback" not in server.stderr


def test_without_fork_more_than_one_worker_is_refused_naming_the_system(tmp_path: Path) -> None:
    """Windows has no ``os.fork``: played here by removing it before the command runs."""
    command = _serve(tmp_path, "--workers", "2")
    command[1:3] = ["-c", "import os, sys; del os.fork; from grapharc.cli.main import run; "
                          "sys.exit(run(sys.argv[1:]))"]
    with ServerProcess(command) as server:
        assert server.wait() == 2
    error = json.loads(server.stdout)["error"]
    assert error["code"] == "WorkersNeedForkError" and "--workers 1" in error["hint"]


def test_a_registry_that_raises_is_named_as_the_registrys_error_not_a_grapharc_bug(tmp_path: Path) -> None:
    command = _serve(tmp_path)
    command[command.index("api_graphs:register")] = "os:getcwd"  # callable, but not with a manager
    with ServerProcess(command) as server:
        assert server.wait() == 2
    error = json.loads(server.stdout)["error"]
    assert error["code"] == "RegistryError"
    assert error["message"].startswith("registry 'os:getcwd' failed: TypeError:")
    assert "bug" not in error["hint"] and "Traceback" not in server.stderr
