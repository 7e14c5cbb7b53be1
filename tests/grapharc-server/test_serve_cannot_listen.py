"""An address ``grapharc serve`` cannot listen on: exit 2, one error naming it and why, never a traceback."""

from __future__ import annotations

import json

import pytest
from server_process import ServerProcess, grapharc_serve, needs_ipv6

# name: (options, error code, the address or option the message names, the reason it gives)
CANNOT_LISTEN = {
    "port in use": (["--port", "{busy_port}"], "AddressInUseError", "127.0.0.1:{busy_port}",
                    "already in use"),
    "host not of this machine": (["--host", "203.0.113.1"], "AddressNotLocalError", "203.0.113.1:8000",
                                 "not an address of this machine"),
    "host that does not resolve": (["--host", "no-such-host.invalid"], "HostNotFoundError",
                                   "no-such-host.invalid:8000", "does not resolve"),
    # a port no socket can have is refused as the option is read, by the shared Port type
    "port above 65535": (["--port", "65536"], "UsageError", "'--port'", "0 to 65535, got '65536'"),
    "negative port": (["--port", "-1"], "UsageError", "'--port'", "0 to 65535, got '-1'"),
    "port not a number": (["--port", "http"], "UsageError", "'--port'", "must be an integer"),
    # any other refusal: the operating system's reason (a link-local address needs a scope)
    "IPv6 link-local address without a scope": (["--host", "fe80::1"], "CannotListenError",
                                                "[fe80::1]:8000", "invalid argument"),
}
CASES = [pytest.param(case, id=name, marks=[needs_ipv6] if "IPv6" in name else [])
         for name, case in CANNOT_LISTEN.items()]


def run_serve(options: list[str], busy_port: int, *extra: str) -> ServerProcess:
    command = grapharc_serve(*(option.format(busy_port=busy_port) for option in options), *extra)
    with ServerProcess(command) as server:
        server.wait()
    return server


@pytest.mark.parametrize("case", CASES)
def test_json_mode_prints_one_error_document_and_exits_2(case, busy_port):
    options, code, names, reason = case
    server = run_serve(options, busy_port, "--json")
    assert server.process.returncode == 2
    document = json.loads(server.stdout)
    error = document["error"]
    assert document["ok"] is False and error["code"] == code
    assert names.format(busy_port=busy_port) in error["message"] and reason in error["message"]
    assert error["hint"]
    assert server.stderr == ""


@pytest.mark.parametrize("case", CASES)
def test_human_mode_prints_the_error_on_stderr_never_serving_on_and_exits_2(case, busy_port):
    options, _, names, reason = case
    server = run_serve(options, busy_port)
    assert server.process.returncode == 2
    assert server.stdout == ""
    error, hint = server.stderr.splitlines()
    assert error.startswith("error: ") and names.format(busy_port=busy_port) in error and reason in error
    assert hint.startswith("hint: ")
