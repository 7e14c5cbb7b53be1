"""A server's SSE stream of an agent run never carries a configured secret: the planted key, read
by a tool and repeated by the model, reaches the stream (its tokens too), the thread's state and
its trace as the redaction mark only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from secret_agent import SECRET_AGENT, WORKSPACE_ENV
from server_process import ServerProcess, grapharc_serve, sse_events

KEY = "sk-planted-93c1d0e7a54b4f28bb6a"
MARK = "[redacted:OPENAI_API_KEY]"


@pytest.fixture
def secret_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text(f"the key is {KEY}\n")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv(WORKSPACE_ENV, str(tmp_path / "ws"))
    command = grapharc_serve("--port", "0", "--json", "--sessions", str(tmp_path / "sessions"),
                             "--registry", "secret_agent:register")
    with ServerProcess(command) as server:
        yield server.json_announcement()["url"]


def test_the_stream_the_state_and_the_trace_of_an_agent_run_carry_no_secret(secret_server: str) -> None:
    with httpx.Client(base_url=secret_server, timeout=120) as client:
        thread = client.post("/threads", json={"metadata": {"graph_id": SECRET_AGENT}}).json()["thread_id"]
        body = {"assistant_id": SECRET_AGENT, "input": {"task": "read the note"},
                "stream_mode": ["values", "updates", "events", "messages-tuple"]}
        with client.stream("POST", f"/threads/{thread}/runs/stream", json=body) as response:
            stream = response.read().decode()
        state = client.get(f"/threads/{thread}/state").text
        trace = client.get(f"/threads/{thread}/trace").text
    events = sse_events(stream)
    assert events[-1]["event"] == "end"
    assert any(event["event"] == "messages" and MARK in event["data"] for event in events)  # a token
    for text in (stream, state, trace):
        assert KEY not in text
    assert MARK in stream and MARK in state
