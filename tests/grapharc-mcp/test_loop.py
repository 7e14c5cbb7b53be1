"""The background loop's handoff: a coroutine's result or error comes back to the calling thread,
one that outlives its timeout is cancelled on the loop while the caller gets TimeoutError, and the
loop is woken by one read of its doorbell, the coroutine running in its caller's context."""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading

import pytest
from mcp_setup import stdio_entry

from grapharc.mcp import loop
from grapharc.mcp.config import parse_server
from grapharc.mcp.connection import ServerConnection

PATIENCE_SECONDS = 60
"""A bound on waiting for the cancellation, which nothing else would bring; nothing is timed with it."""


class Refused(Exception):
    pass


async def double(value: int) -> int:
    await asyncio.sleep(0)
    return 2 * value


async def refuse() -> None:
    await asyncio.sleep(0)
    raise Refused("no")


def test_the_result_comes_back_to_the_calling_thread():
    assert [loop.run(double(n), None) for n in range(3)] == [0, 2, 4]


def test_the_coroutines_error_is_raised_in_the_calling_thread():
    with pytest.raises(Refused, match="no"):
        loop.run(refuse(), None)


def test_a_coroutine_past_its_timeout_is_cancelled_on_the_loop():
    cancelled = threading.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()  # nothing sets it
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(TimeoutError, match=r"no answer within 0\.01 s"):
        loop.run(forever(), 0.01)
    assert cancelled.wait(PATIENCE_SECONDS)  # cancelled by the loop once the caller gave up
    assert loop.run(double(4), None) == 8  # and the loop goes on serving calls


def test_a_tool_call_sets_no_timer_on_the_loop_its_hand_off_times_it(tmp_path):
    server = parse_server("notes", stdio_entry("notes"), tmp_path)
    connection = ServerConnection(server)
    connection.connect()
    background = loop.background_loop()
    timers: list[object] = []
    call_at = background.call_at
    background.call_at = lambda when, callback, *args, **kwargs: (  # type: ignore[method-assign]
        timers.append(callback) or call_at(when, callback, *args, **kwargs))
    try:
        answers = [connection.call("echo", {"text": f"t{n}"}, 30.0).content[0].text for n in range(5)]
    finally:
        del background.call_at
        connection.close()
    assert answers == [f"t{n}" for n in range(5)]
    assert timers == []  # the hand-off times the call: no timer is set and cancelled per call


def test_a_hand_off_wakes_the_loop_with_one_read_of_its_doorbell(tmp_path, monkeypatch):
    """asyncio's own wake-up (``call_soon_threadsafe``) reads its self-pipe until it raises
    ``BlockingIOError``: two reads and an exception on the loop per call, where the doorbell's pipe
    is read once."""
    server = parse_server("notes", stdio_entry("notes"), tmp_path)
    connection = ServerConnection(server)
    connection.connect()
    background = loop.background_loop()
    woken: list[object] = []
    reads: list[int] = []
    read, call_soon_threadsafe = os.read, background.call_soon_threadsafe
    monkeypatch.setattr(background, "call_soon_threadsafe",
                        lambda *args, **kwargs: woken.append(args) or call_soon_threadsafe(*args, **kwargs))
    monkeypatch.setattr(os, "read", lambda fd, size: reads.append(fd) or read(fd, size))
    try:
        answers = [connection.call("echo", {"text": f"t{n}"}, 30.0).content[0].text for n in range(5)]
    finally:
        monkeypatch.undo()
        connection.close()
    assert answers == [f"t{n}" for n in range(5)]
    assert woken == []  # no call wakes the loop through asyncio's self-pipe
    doorbell = loop._started()[1]._read_end
    assert 1 <= reads.count(doorbell) <= 5  # one read of the doorbell per wake-up (rings may share one)


def test_the_coroutine_runs_in_the_callers_context():
    seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="the loop's")

    async def read() -> str:
        return seen.get()

    token = seen.set("the caller's")
    try:
        assert loop.run(read(), None) == "the caller's"
    finally:
        seen.reset(token)
