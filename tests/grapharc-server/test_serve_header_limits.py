"""Request heads are bounded before anything runs, against a real ``grapharc serve`` and a raw
socket (issue 32, point 4): a header that never ends is refused once 64 KiB of it has arrived,
20,000 headers are refused, 101 are refused with 431, and the server goes on serving. Each under
httptools (what serve runs) and under h11 (where httptools is not installed)."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from server_process import PATIENCE_SECONDS, ServerProcess

from grapharc.server.heads import MAX_HEAD_BYTES, MAX_HEADERS

WITHOUT_HTTPTOOLS = Path(__file__).with_name("without_httptools.py")
REFUSED = {"httptools": b"HTTP/1.1 431 ", "h11": b"HTTP/1.1 400 "}
"""How each parser's refusal of an oversized head starts (uvicorn answers h11's own limit with 400)."""


@pytest.fixture(scope="module", params=["httptools", "h11"])
def server(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The announcement of a server with the threads API, run on ``request.param``'s parser."""
    tmp = tmp_path_factory.mktemp("heads")
    options = ["--port", "0", "--json", "--sessions", str(tmp / "sessions"),
               "--registry", "api_graphs:register"]
    launcher = [sys.executable, "-m", "grapharc.cli", "serve"] if request.param == "httptools" \
        else [sys.executable, str(WITHOUT_HTTPTOOLS)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(Path(__file__).parent))
        with ServerProcess([*launcher, *options]) as running:
            announced = running.json_announcement()
            assert announced["http"] == request.param
            yield announced


def exchange(announced: dict[str, Any], *parts: bytes) -> bytes:
    """Send ``parts`` on a connection of its own and read until the server closes it: what came back
    (empty when the server reset the connection before its answer was read)."""
    answer = b""
    with socket.create_connection((announced["host"], announced["port"]), timeout=PATIENCE_SECONDS) as raw:
        try:
            for part in parts:
                raw.sendall(part)
            while chunk := raw.recv(65536):
                answer += chunk
        except (BrokenPipeError, ConnectionResetError):  # refused while sending: closed on us
            pass
    return answer


def healthy(announced: dict[str, Any]) -> bool:
    answer = exchange(announced, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    return answer.startswith(b"HTTP/1.1 200 ") and b'"ok":true' in answer


def test_a_header_that_never_ends_is_refused_once_the_limit_has_arrived(server: dict[str, Any]) -> None:
    head = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: "
    answer = exchange(server, head, *[b"a" * 65536] * 16)  # 1 MiB, and no end: only a refusal answers
    assert answer == b"" or answer.startswith(REFUSED[server["http"]]), answer[:300]
    assert healthy(server)


def test_twenty_thousand_headers_are_refused(server: dict[str, Any]) -> None:
    many = b"".join(b"X-%d: v\r\n" % i for i in range(20_000))
    answer = exchange(server, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n" + many + b"\r\n")
    assert answer == b"" or answer.startswith(REFUSED[server["http"]]), answer[:300]
    assert healthy(server)


def test_one_header_over_the_count_is_refused_with_431_and_a_problem(server: dict[str, Any]) -> None:
    start, end = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n", b"Connection: close\r\n\r\n"
    extra = [b"X-%d: v\r\n" % i for i in range(MAX_HEADERS - 1)]  # with Host and Connection: 101
    answer = exchange(server, start + b"".join(extra) + end)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:300]
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"content-type: application/problem+json" in head.lower()
    detail = json.loads(body)["detail"]
    assert detail == f"this request carries {MAX_HEADERS + 1} headers, over the limit of {MAX_HEADERS}"
    at_the_limit = exchange(server, start + b"".join(extra[1:]) + end)
    assert at_the_limit.startswith(b"HTTP/1.1 200 "), at_the_limit[:300]


def test_a_long_body_after_a_short_head_is_not_a_long_head(server: dict[str, Any]) -> None:
    """The meter counts the head only: a body 8 times the head limit, sent in the head's packet
    and after it, and two requests pipelined in one send, are served."""
    body = json.dumps({"metadata": {"note": "a" * (8 * MAX_HEAD_BYTES)}, "limit": 1}).encode()
    search = (b"POST /threads/search HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body)) + body
    closing = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    answer = exchange(server, search + closing)
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.count(b"HTTP/1.1 200 ") == 2, answer[:300]
    assert b'"ok":true' in answer
