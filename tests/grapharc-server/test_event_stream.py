"""The SSE response of the API's streams (``grapharc.server.event_stream``), driven over ASGI in this
process: its framing, its refusals, HEAD, a ping while idle, and how it ends (its client gone, or
the server stopping)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator

import pytest
from starlette.types import Message

from grapharc.server import event_stream
from grapharc.server.event_stream import EventStream, encode, end_open_streams

HTTP = {"type": "http", "method": "GET"}


def test_an_event_is_framed_as_sse_with_a_data_line_per_line_and_no_break_in_its_id_or_name() -> None:
    framed = encode({"event": "up\rdates", "id": "1-0\n", "data": "one\ntwo\r\nthree"})
    assert framed == b"id: 1-0\r\nevent: updates\r\ndata: one\r\ndata: two\r\ndata: three\r\n\r\n"
    assert encode({"data": "x"}) == b"data: x\r\n\r\n"


class CountedPattern:
    """A compiled pattern that counts its ``sub`` and ``split`` calls."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.calls = 0

    def sub(self, replacement: str, text: str) -> str:
        self.calls += 1
        return self.pattern.sub(replacement, text)

    def split(self, text: str) -> list[str]:
        self.calls += 1
        return self.pattern.split(text)


def test_an_event_without_line_breaks_is_framed_without_splitting_any_field(
        monkeypatch: pytest.MonkeyPatch) -> None:
    breaks = CountedPattern(event_stream._LINE_BREAK)
    monkeypatch.setattr(event_stream, "_LINE_BREAK", breaks)
    framed = encode({"event": "updates", "id": "1733611234567-0", "data": '{"first": {"count": 1}}'})
    assert framed == b'id: 1733611234567-0\r\nevent: updates\r\ndata: {"first": {"count": 1}}\r\n\r\n'
    assert breaks.calls == 0  # each field went through the pattern: 18 thousand instructions an event, now 10
    assert encode({"data": "one\ntwo"}) == b"data: one\r\ndata: two\r\n\r\n" and breaks.calls == 1


def test_an_event_with_a_field_sse_streams_here_do_not_send_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="not retry"):
        encode({"data": "x", "retry": "5"})


def test_a_heartbeat_of_no_time_is_refused() -> None:
    with pytest.raises(ValueError, match="more than 0 seconds, not 0"):
        EventStream(_never(), heartbeat=0)


class Client:
    """An ASGI client: what the response sent, and a hang-up to send it when asked."""

    def __init__(self) -> None:
        self.sent: list[Message] = []
        self.gone = asyncio.Event()
        self.got_body = asyncio.Event()

    async def receive(self) -> Message:
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        self.sent.append(message)
        if message["type"] == "http.response.body":
            self.got_body.set()

    async def answered(self, stream: EventStream) -> None:
        await stream(HTTP, self.receive, self.send)

    @property
    def bodies(self) -> list[bytes]:
        return [m["body"] for m in self.sent if m["type"] == "http.response.body"]


async def _never() -> AsyncIterator[dict[str, str]]:
    await asyncio.Event().wait()
    yield {"data": "never"}


def test_a_head_request_gets_the_headers_and_an_empty_body_and_never_starts_the_events() -> None:
    started: list[bool] = []

    async def events() -> AsyncIterator[dict[str, str]]:
        started.append(True)
        yield {"data": "x"}

    client = Client()
    asyncio.run(EventStream(events(), heartbeat=15)({"type": "http", "method": "HEAD"}, client.receive,
                                                     client.send))
    assert client.sent[0]["type"] == "http.response.start" and client.bodies == [b""]
    assert not started


def test_an_idle_stream_pings_then_goes_on_with_its_events_and_ends_complete() -> None:
    client = Client()
    pinged = asyncio.Event()

    async def send(message: Message) -> None:
        await client.send(message)
        if message.get("body", b"").startswith(b": ping - "):
            pinged.set()

    async def events() -> AsyncIterator[dict[str, str]]:
        yield {"event": "first", "data": "1"}
        await pinged.wait()  # idle until a ping went out
        yield {"event": "second", "data": "2"}

    asyncio.run(EventStream(events(), heartbeat=0.001)(HTTP, client.receive, send))
    bodies = client.bodies
    assert bodies[0] == b"event: first\r\ndata: 1\r\n\r\n"
    assert bodies[1].startswith(b": ping - ") and bodies[1].endswith(b"+00:00\r\n\r\n")
    assert bodies[-2:] == [b"event: second\r\ndata: 2\r\n\r\n", b""]
    assert client.sent[-1]["more_body"] is False


def test_a_client_that_hangs_up_stops_the_events_and_is_sent_nothing_more() -> None:
    client = Client()
    closed: list[bool] = []

    async def scenario() -> None:
        answering = asyncio.create_task(client.answered(EventStream(_one_then_idle(closed), heartbeat=15)))
        await client.got_body.wait()
        client.gone.set()
        await answering

    asyncio.run(scenario())
    assert closed == [True]
    assert client.bodies == [b"data: 1\r\n\r\n"]  # no end sent to a client that is gone


def test_a_stopping_server_ends_the_open_streams_with_a_complete_response() -> None:
    client = Client()
    closed: list[bool] = []

    async def scenario() -> None:
        answering = asyncio.create_task(client.answered(EventStream(_one_then_idle(closed), heartbeat=15)))
        await client.got_body.wait()
        end_open_streams()
        await answering

    asyncio.run(scenario())
    assert closed == [True]
    assert client.bodies == [b"data: 1\r\n\r\n", b""] and client.sent[-1]["more_body"] is False


def test_an_error_of_the_events_is_not_taken_for_the_streams_own_stop() -> None:
    async def events() -> AsyncIterator[dict[str, str]]:
        yield {"data": "1"}
        raise TimeoutError("the store did not answer")

    client = Client()
    with pytest.raises(TimeoutError, match="the store did not answer"):
        asyncio.run(EventStream(events(), heartbeat=15)(HTTP, client.receive, client.send))


async def _one_then_idle(closed: list[bool]) -> AsyncIterator[dict[str, str]]:
    """One event, then nothing until the stream closes it (noted in ``closed``)."""
    try:
        yield {"data": "1"}
        await asyncio.Event().wait()
    finally:
        closed.append(True)
