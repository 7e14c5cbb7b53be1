"""The stream and the trace are one record: a long answer and values JSON cannot hold read the same
on the SSE stream, the thread and its state, and the trace names every field the stream shows;
a stream client that breaks mid-run cannot fail the node.

The stream is a reader of the durable trace: it polls the audit trail (and the checkpoints it
names) from its own task, after the node's writes are saved. No sink or subscriber runs inside
the node, so nothing a stream client does can reach the node: the test proves it with a client
that resets its connection in the middle of a run.
"""

from __future__ import annotations

import base64
import json
import socket
import struct
from pathlib import Path
from typing import Any

import httpx
from api_graphs import LONG_ANSWER, ODD, WAITER
from server_process import api_server_url, sse_events
from test_api_http import _thread

api_server = api_server_url("stream-record")
"""The module's one server: each test makes threads of its own and reads only those."""

EXPECTED = {"answer": LONG_ANSWER, "reading": None, "tags": ["a", "b"],
            "raw": base64.b64encode(b"\x00\xffok").decode(), "seen_at": "2026-12-01T15:00:00+00:00"}


def test_a_long_answer_and_odd_values_read_the_same_on_the_stream_and_the_trace(api_server: str) -> None:
    with httpx.Client(base_url=api_server, timeout=60) as client:
        thread = _thread(client, ODD)
        body = {"assistant_id": ODD, "input": {}, "stream_mode": ["values", "updates"]}
        with client.stream("POST", f"/threads/{thread}/runs/stream", json=body) as response:
            events = sse_events(response.read().decode())
        assert events[-1]["event"] == "end"
        assert json.loads(events[-1]["data"])["status"] == "success"
        numbered = {e["id"]: json.loads(e["data"]) for e in events if "id" in e}  # strict JSON: no NaN
        trace = [json.loads(line) for line in client.get(f"/threads/{thread}/trace").text.splitlines()]
        node = next(t for t in trace if t["kind"] == "node")
        update = numbered[f"{node['seq']}-1"]["answer_oddly"]
        assert update == EXPECTED
        assert sorted(update) == sorted(node["detail"]["writes"])
        values = numbered[f"{node['seq']}-0"]
        assert {k: values[k] for k in EXPECTED} == EXPECTED
        assert len(values["answer"]) == len(LONG_ANSWER) > 2_000
        state = client.get(f"/threads/{thread}/state").json()["values"]
        assert state == values
        assert client.get(f"/threads/{thread}").json()["values"] == values


def test_a_stream_client_that_breaks_mid_run_cannot_fail_the_node(api_server: str, tmp_path: Path) -> None:
    release = tmp_path / "release"
    host, port = httpx.URL(api_server).host, httpx.URL(api_server).port
    with httpx.Client(base_url=api_server, timeout=60) as client:
        thread = _thread(client, WAITER)
        body = json.dumps({"assistant_id": WAITER, "input": {"release_file": str(release)},
                           "stream_mode": ["updates", "events"]}).encode()
        with socket.create_connection((host, port)) as raw:
            head = (f"POST /threads/{thread}/runs/stream HTTP/1.1\r\nHost: {host}\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
            raw.sendall(head.encode() + body)
            received = b""
            while b"event: metadata" not in received:
                received += raw.recv(4096)
            run_id = _run_id(received)
            # close with a reset (linger 0), mid-run, without reading the rest of the stream
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        release.touch()
        joined = client.get(f"/threads/{thread}/runs/{run_id}/join").json()
        assert joined["released"] is True
        assert client.get(f"/threads/{thread}/runs/{run_id}").json()["status"] == "success"
        trace = client.get(f"/threads/{thread}/trace").text.splitlines()
        kinds = [json.loads(line)["kind"] for line in trace]
        assert "node" in kinds and "failed" not in kinds
        assert client.get(f"/threads/{thread}").json()["metadata"]["grapharc_status"] == "completed"


def _run_id(received: bytes) -> str:
    for line in received.decode(errors="replace").splitlines():
        if line.startswith("data: ") and "run_id" in line:
            data: dict[str, Any] = json.loads(line[len("data: "):])
            return str(data["run_id"])
    raise AssertionError("no metadata event in what the stream sent")
