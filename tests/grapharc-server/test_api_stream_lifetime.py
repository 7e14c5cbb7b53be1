"""What a run's or a thread's event stream does over its life, on a real server: a comment ping
while it has nothing to send, a client that hangs up ending only its own stream (and cancelling
the run only when it asked to), and a server told to stop ending the streams still open."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from api_graphs import WAITER
from server_process import ServerProcess, sse_events

LAUNCHER = Path(__file__).with_name("short_heartbeat_server.py")


@dataclass
class Served:
    process: ServerProcess
    url: str


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    """A ``grapharc serve`` of api_graphs.py's graphs whose streams ping when idle for a moment."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(Path(__file__).parent),
                                                                     os.environ.get("PYTHONPATH")])))
    command = [sys.executable, str(LAUNCHER), "--port", "0", "--json", "--sessions",
               str(tmp_path / "sessions"), "--registry", "api_graphs:register"]
    with ServerProcess(command) as served:
        yield Served(served, str(served.json_announcement()["url"]))


def _thread(client: httpx.Client) -> str:
    return str(client.post("/threads", json={"metadata": {"graph_id": WAITER}}).json()["thread_id"])


def _start(client: httpx.Client, thread: str, release: Path) -> str:
    """A waiter run on ``thread`` that runs until ``release`` exists: its id."""
    run = client.post(f"/threads/{thread}/runs",
                      json={"assistant_id": WAITER, "input": {"release_file": str(release)}})
    return str(run.json()["run_id"])


def _until_ping(lines: Iterator[str]) -> list[str]:
    """The lines read up to and with the first comment line (a heartbeat)."""
    seen = []
    for line in lines:
        seen.append(line)
        if line.startswith(":"):
            return seen
    raise AssertionError(f"the stream ended without a ping: {seen}")


def _events_to_end(lines: Iterator[str]) -> list[dict[str, str]]:
    return sse_events("\n".join(lines) + "\n\n")


def test_an_idle_run_stream_pings_with_a_comment_and_keeps_its_headers_and_events(
        server: Served, tmp_path: Path) -> None:
    release = tmp_path / "release"
    with httpx.Client(base_url=server.url, timeout=60) as client:
        thread = _thread(client)
        body = {"assistant_id": WAITER, "input": {"release_file": str(release)}, "stream_mode": "updates"}
        with client.stream("POST", f"/threads/{thread}/runs/stream", json=body) as response:
            headers = response.headers
            assert headers["content-type"] == "text/event-stream; charset=utf-8"
            assert headers["cache-control"] == "no-store"
            assert headers["x-accel-buffering"] == "no"
            assert headers["location"] == headers["content-location"]
            assert headers["location"].startswith(f"/threads/{thread}/runs/")
            lines = response.iter_lines()
            before = _until_ping(lines)
            assert before[0] == "event: metadata" and before[-1].startswith(": ping")
            release.touch()
            events = _events_to_end(lines)
    assert [e["event"] for e in events] == ["updates", "end"]
    assert json.loads(events[-1]["data"])["status"] == "success"
    assert events[0]["id"] and events[-1]["id"]


def test_a_client_that_hangs_up_ends_only_its_own_stream(server: Served, tmp_path: Path) -> None:
    release = tmp_path / "release"
    with httpx.Client(base_url=server.url, timeout=60) as client, \
            httpx.Client(base_url=server.url, timeout=60) as other:
        thread = _thread(client)
        run_id = _start(client, thread, release)
        stream = f"/threads/{thread}/runs/{run_id}/stream"
        with other.stream("GET", stream, params={"stream_mode": "updates"}) as staying:
            kept = staying.iter_lines()
            _until_ping(kept)
            with client.stream("GET", stream, params={"stream_mode": "updates"}) as leaving:
                _until_ping(leaving.iter_lines())
            _until_ping(kept)  # still served after the other hung up
            assert client.get(f"/threads/{thread}/runs/{run_id}").json()["status"] == "running"
            release.touch()
            events = _events_to_end(kept)
    assert [e["event"] for e in events] == ["updates", "end"]
    assert json.loads(events[-1]["data"])["status"] == "success"


def test_a_client_that_asked_to_cancel_on_disconnect_cancels_the_run_when_it_hangs_up(
        server: Served, tmp_path: Path) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as client, \
            httpx.Client(base_url=server.url, timeout=60) as other:
        thread = _thread(client)
        run_id = _start(client, thread, tmp_path / "never")
        stream = f"/threads/{thread}/runs/{run_id}/stream"
        with other.stream("GET", stream, params={"stream_mode": "updates"}) as staying:
            kept = staying.iter_lines()
            _until_ping(kept)
            with client.stream("GET", stream, params={"stream_mode": "updates",
                                                      "cancel_on_disconnect": "true"}) as leaving:
                _until_ping(leaving.iter_lines())
            events = _events_to_end(kept)  # the other reader sees the run end, cancelled
    assert [e["event"] for e in events] == ["end"]
    assert json.loads(events[-1]["data"])["status"] == "interrupted"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stopping_server_ends_the_streams_still_open_and_exits_0(server: Served,
                                                                    sig: signal.Signals) -> None:
    """A thread's stream stays open until its client leaves; a drain must not wait for that, and
    ends it as a complete response (the client reads a proper end, not a cut connection)."""
    with httpx.Client(base_url=server.url, timeout=60) as client:
        thread = _thread(client)
        with client.stream("GET", f"/threads/{thread}/stream") as response:
            lines = response.iter_lines()
            _until_ping(lines)
            server.process.send(sig)
            assert not any(lines)  # the ping's blank line; then a complete end (sse-starlette cut it off)
        assert server.process.wait() == 0
    assert "stopped: every request finished" in server.process.stderr

