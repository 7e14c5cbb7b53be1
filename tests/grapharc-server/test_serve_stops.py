"""SIGTERM or SIGINT drains ``grapharc serve``: in-flight requests finish, then it exits 0; a second
signal, or a drain that outlasts ``--drain-timeout``, stops it at once with exit 1."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

import httpx
import pytest
from gated_server import IN_FLIGHT_NOTICE
from server_process import PATIENCE_SECONDS, ServerProcess, gated_serve, grapharc_serve

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
