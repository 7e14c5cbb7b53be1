"""A real OpenAI-compatible HTTP server on 127.0.0.1 for the gateway's tests and benchmark.

``FakeOpenAI`` serves ``POST /v1/chat/completions`` (JSON or SSE, as the request
asks) and ``GET /v1/models`` from a thread. Each request takes the next scripted
step, or a default echo reply when the script is empty:

- ``Reply``: a completion — text, tool calls, usage with or without an
  OpenRouter-style ``usage.cost``, cached prompt tokens, a refusal, the served model;
  streamed replies can reset the connection after some chunks;
- ``Status``: an HTTP error, optionally with ``Retry-After`` / ``retry-after-ms``;
- ``Reset``: the socket is closed with an RST and no response;
- ``Slow``: the reply comes only after a delay (past a short client timeout).

Every request is recorded (path, lower-cased headers, JSON body) for assertions.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """A successful completion; ``tool_calls`` are ``{"name": ..., "arguments": {...}}``."""

    content: str | None = "hello from the fake"
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int = 12
    completion_tokens: int = 5
    cached_tokens: int | None = None
    cost: float | None = None
    usage: bool = True
    model: str | None = None
    finish_reason: str | None = None
    refusal: str | None = None
    reset_after_chunks: int | None = None


@dataclass
class Status:
    """An HTTP error response."""

    code: int
    message: str = "scripted failure"
    retry_after: str | None = None
    retry_after_ms: str | None = None


@dataclass
class Reset:
    """Close the connection with an RST, sending nothing."""


@dataclass
class Slow:
    """Answer with ``then`` only after ``seconds``."""

    seconds: float
    then: Reply = field(default_factory=Reply)


@dataclass
class Request:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None


class FakeOpenAI:
    """The server, its script and its request log; use as a context manager."""

    def __init__(self, required_key: str | None = None) -> None:
        self.required_key = required_key
        self.requests: list[Request] = []
        self._script: deque[Reply | Status | Reset | Slow] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._server.handle_error = lambda request, address: None  # clients hang up on purpose
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def embeddings(self) -> list[Request]:
        """The embeddings requests received so far."""
        return [r for r in self.requests if r.path.endswith("/embeddings")]

    @property
    def completions(self) -> list[Request]:
        """The chat-completion requests received so far."""
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def script(self, *steps: Reply | Status | Reset | Slow) -> None:
        """Queue steps; each request takes the next one."""
        with self._lock:
            self._script.extend(steps)

    def next_step(self, body: dict[str, Any] | None) -> Reply | Status | Reset | Slow:
        with self._lock:
            if self._script:
                return self._script.popleft()
        last = ((body or {}).get("messages") or [{}])[-1].get("content")
        return Reply(content=f"echo: {last}")

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; False when the server is stopping."""
        return not self._stopping.wait(seconds)

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


EMBEDDED_CONCEPTS = (("car", "automobile", "vehicle"), ("loom", "weaving"))


def embeddings_document(body: dict[str, Any]) -> dict[str, Any]:
    """An embeddings answer: each input text as how often it names each concept's words."""
    texts = body.get("input") or []
    vectors = [[float(sum(text.lower().split().count(word) for word in concept))
                for concept in EMBEDDED_CONCEPTS] for text in texts]
    return {"object": "list", "model": body.get("model", ""),
            "data": [{"object": "embedding", "index": place, "embedding": vector}
                     for place, vector in enumerate(vectors)],
            "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)}}


def completion_document(step: Reply, model: str) -> dict[str, Any]:
    """The non-streamed chat.completion body for ``step``."""
    message: dict[str, Any] = {"role": "assistant", "content": step.content}
    if step.tool_calls:
        message["tool_calls"] = [_tool_call(index, call) for index, call in enumerate(step.tool_calls)]
    if step.refusal is not None:
        message["refusal"] = step.refusal
    document: dict[str, Any] = {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": step.model or model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(step)}],
    }
    if step.usage:
        document["usage"] = usage_document(step)
    return document


def usage_document(step: Reply) -> dict[str, Any]:
    usage: dict[str, Any] = {"prompt_tokens": step.prompt_tokens,
                             "completion_tokens": step.completion_tokens,
                             "total_tokens": step.prompt_tokens + step.completion_tokens}
    if step.cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": step.cached_tokens}
    if step.cost is not None:
        usage["cost"] = step.cost
    return usage


def stream_events(step: Reply, model: str, include_usage: bool) -> list[dict[str, Any]]:
    """The chat.completion.chunk events for ``step``, in order."""
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                "model": step.model or model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events = [chunk({"role": "assistant", "content": ""})]
    for word in (step.content or "").split(" ") if step.content else []:
        events.append(chunk({"content": word if len(events) == 1 else f" {word}"}))
    for index, call in enumerate(step.tool_calls):
        events.append(chunk({"tool_calls": [{**_tool_call(index, call), "index": index}]}))
    events.append(chunk({}, _finish(step)))
    if include_usage and step.usage:
        events.append({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                       "model": step.model or model, "choices": [], "usage": usage_document(step)})
    return events


def _tool_call(index: int, call: dict[str, Any]) -> dict[str, Any]:
    return {"id": call.get("id", f"call_{index}"), "type": "function",
            "function": {"name": call["name"], "arguments": json.dumps(call.get("arguments", {}))}}


def _finish(step: Reply) -> str:
    return step.finish_reason or ("tool_calls" if step.tool_calls else "stop")


def _handler_for(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as separate writes

        def log_message(self, format: str, *args: Any) -> None:
            return

        def finish(self) -> None:
            with contextlib.suppress(OSError, ValueError):  # the client hung up, or we reset it
                super().finish()

        def do_GET(self) -> None:
            fake.record(Request("GET", self.path, self._headers(), None))
            if not self._authorised():
                return
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            fake.record(Request("POST", self.path, self._headers(), body))
            if not self._authorised():
                return
            route = self.path.rstrip("/")
            if not route.endswith(("/chat/completions", "/embeddings")):
                self._json(404, {"error": {"message": f"no route {self.path}"}})
                return
            step = fake.next_step(body)
            if isinstance(step, Slow):
                if not fake.wait(step.seconds):
                    return
                step = step.then
            if isinstance(step, Reset):
                self._reset()
            elif isinstance(step, Status):
                headers = {}
                if step.retry_after is not None:
                    headers["Retry-After"] = step.retry_after
                if step.retry_after_ms is not None:
                    headers["retry-after-ms"] = step.retry_after_ms
                self._json(step.code, {"error": {"message": step.message, "code": step.code}}, headers)
            elif route.endswith("/embeddings"):
                self._json(200, embeddings_document(body))
            elif body.get("stream"):
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                self._stream(stream_events(step, body.get("model", ""), include_usage),
                             step.reset_after_chunks)
            else:
                self._json(200, completion_document(step, body.get("model", "")))

        def _headers(self) -> dict[str, str]:
            return {key.lower(): value for key, value in self.headers.items()}

        def _authorised(self) -> bool:
            expected = f"Bearer {fake.required_key}"
            if fake.required_key is None or self.headers.get("Authorization") == expected:
                return True
            self._json(401, {"error": {"message": "Incorrect API key provided", "code": 401}})
            return False

        def _json(self, code: int, document: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            payload = json.dumps(document).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)

        def _stream(self, events: list[dict[str, Any]], reset_after: int | None) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for count, event in enumerate([*events, "[DONE]"]):
                if reset_after is not None and count == reset_after:
                    self._reset()
                    return
                data = event if isinstance(event, str) else json.dumps(event)
                self._chunk(f"data: {data}\n\n".encode())
            self._chunk(b"")

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _reset(self) -> None:
            self.close_connection = True
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()

    return Handler
