"""SIGTERM or SIGINT drains ``grapharc serve``: in-flight requests finish, then it exits 0; a second
signal, or a drain that outlasts ``--drain-timeout``, stops it at once with exit 1."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from api_graphs import WAITER
from gated_server import IN_FLIGHT_NOTICE
from server_process import PATIENCE_SECONDS, ServerProcess, gated_serve, grapharc_serve, read_announcement

STOP_SIGNALS = pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])


@contextmanager
def request_in_flight(server: ServerProcess) -> Iterator[Future[httpx.Response]]:
    """A ``GET /gated`` sent on another thread, yielded once the app is handling it."""
    url = server.json_announcement()["url"]
    with ThreadPoolExecutor(max_workers=1) as pool:
        response = pool.submit(httpx.get, url + "/gated", timeout=PATIENCE_SECONDS)
        server.stderr_line_containing(IN_FLIGHT_NOTICE)
        yield response


@STOP_SIGNALS
def test_a_signal_stops_an_idle_server_with_exit_0_and_its_one_json_document(sig):
    with ServerProcess(grapharc_serve("--port", "0", "--json")) as server:
        announced = server.json_announcement()
        with httpx.Client() as client:  # leaves an idle keep-alive connection open
            assert client.get(announced["url"] + "/healthz").status_code == 200
            server.send(sig)
            assert server.wait() == 0
    assert json.loads(server.stdout) == announced
    assert "Traceback" not in server.stderr


@STOP_SIGNALS
def test_a_signal_lets_the_request_in_flight_finish_then_exits_0(sig):
    with ServerProcess(gated_serve("gated", "--port", "0", "--json")) as server:
        with request_in_flight(server) as response:
            server.send(sig)
            assert "1 request in flight" in server.stderr_line_containing(sig.name)
            server.release_gated_request()
            assert response.result().json() == {"finished": True}
        assert server.wait() == 0
    assert "stopped: every request finished" in server.stderr


@STOP_SIGNALS
def test_a_second_signal_stops_at_once_without_the_request_in_flight_and_exits_1(sig):
    with (ServerProcess(gated_serve("gated", "--port", "0", "--json")) as server,
          request_in_flight(server) as response):
        server.send(sig)
        server.stderr_line_containing(sig.name)
        server.send(sig)
        assert server.wait() == 1
        with pytest.raises(httpx.TransportError):
            response.result()
    assert f"{sig.name} again: stopped without finishing 1 request in flight" in server.stderr


def test_a_drain_that_outlasts_its_timeout_stops_without_the_request_and_exits_1():
    with (ServerProcess(gated_serve("gated", "--port", "0", "--json", "--drain-timeout", "0.1")) as server,
          request_in_flight(server) as response):
        server.send(signal.SIGTERM)
        assert server.wait() == 1
        with pytest.raises(httpx.TransportError):
            response.result()
    assert "the drain outlasted 0.1s: stopped without finishing 1 request in flight" in server.stderr


def test_an_app_that_fails_to_start_exits_2_with_one_json_error_after_the_bind():
    with ServerProcess(gated_serve("failing-startup", "--port", "0", "--json")) as server:
        assert server.wait() == 2
    error = json.loads(server.stdout)["error"]
    assert error["code"] == "ServerStartupError" and "http://127.0.0.1:" in error["message"]


def test_a_stop_is_bounded_when_nobody_reads_the_servers_output_any_more():
    """The terminal or log pipe that read the server went away: SIGTERM's notice cannot be
    written, yet the drain's deadline still stops the server (before, the handler raised on the
    broken pipe before it set the deadline, and a request that never finished kept it forever)."""
    pipe = subprocess.PIPE
    process = subprocess.Popen(gated_serve("gated", "--port", "0", "--json", "--drain-timeout", "0.5"),
                               stdin=pipe, stdout=pipe, stderr=pipe, text=True)
    try:
        assert process.stdout is not None
        url = read_announcement(process.stdout.readline)["url"]
        with ThreadPoolExecutor(max_workers=1) as pool:
            response = pool.submit(httpx.get, url + "/gated", timeout=PATIENCE_SECONDS)
            while IN_FLIGHT_NOTICE not in (process.stderr.readline() if process.stderr else ""):
                pass
            for pipe in (process.stdout, process.stderr):
                if pipe is not None:
                    pipe.close()
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=PATIENCE_SECONDS) == 1
            with pytest.raises(httpx.TransportError):
                response.result()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdin is not None:
            process.stdin.close()


def test_a_drain_held_up_by_a_running_sync_node_says_so_and_exits_1(tmp_path, monkeypatch):
    """No request is in flight, but a run's sync node waits for a file that never comes: a
    thread cannot be cancelled, so the drain's deadline ends the process and says why."""
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    command = grapharc_serve("--port", "0", "--json", "--drain-timeout", "0.5", "--sessions",
                             str(tmp_path / "sessions"), "--registry", "api_graphs:register")
    with ServerProcess(command) as server:
        url = server.json_announcement()["url"]
        with httpx.Client(base_url=url, timeout=PATIENCE_SECONDS) as client:
            thread = client.post("/threads", json={"metadata": {"graph_id": WAITER}}).json()["thread_id"]
            client.post(f"/threads/{thread}/runs", json={
                "assistant_id": WAITER, "input": {"release_file": str(tmp_path / "never")}})
            while client.get(f"/threads/{thread}").json()["status"] != "busy":
                time.sleep(0.05)
        server.send(signal.SIGTERM)
        assert server.wait() == 1
    # the client's last request may still be finishing on a busy machine when the signal lands, so
    # the count at the start of the drain is 0 or 1; by the deadline every request has finished
    assert re.search(r"SIGTERM: stopping, (no requests|1 request) in flight", server.stderr), server.stderr
    assert ("the drain outlasted 0.5s: every request finished, but the server's shutdown waited on work "
            "still running in a thread (a sync node cannot be cancelled)") in server.stderr
