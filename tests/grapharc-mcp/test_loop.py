"""The MCP loop, handed a coroutine or driven by the calling thread inside ``loop.driven()``: the
result or error comes back to the calling thread, one that outlives its timeout is cancelled on the
loop while the caller gets TimeoutError, the coroutine runs in its caller's context, and a hand-off
wakes the loop by one read of its doorbell. An agent's tools step runs its calls on its own thread
(the background thread is not woken per call) and gives the loop back when it ends; calls from
other threads meanwhile are answered."""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TypeVar

import pytest
from mcp_agents import agent_for, call, close_sources, policy_rules, reply, run, told
from mcp_setup import stdio_entry

from grapharc.mcp import loop
from grapharc.mcp.config import parse_server
from grapharc.mcp.connection import ServerConnection

T = TypeVar("T")

PATIENCE_SECONDS = 60
"""A bound on waiting for the cancellation, which nothing else would bring; nothing is timed with it."""
MODES: dict[str, Callable[[], AbstractContextManager[None]]] = {"handed off": nullcontext,
                                                                 "driven": loop.driven}
"""How a thread's calls reach the loop: handed to the background thread, or run on the thread itself."""


class Refused(Exception):
    pass


async def double(value: int) -> int:
    await asyncio.sleep(0)
    return 2 * value


async def refuse() -> None:
    await asyncio.sleep(0)
    raise Refused("no")


@pytest.mark.parametrize("mode", MODES)
def test_the_result_comes_back_to_the_calling_thread(mode):
    with MODES[mode]():
        assert [loop.run(double(n), None) for n in range(3)] == [0, 2, 4]


@pytest.mark.parametrize("mode", MODES)
def test_the_coroutines_error_is_raised_in_the_calling_thread(mode):
    with MODES[mode](), pytest.raises(Refused, match="no"):
        loop.run(refuse(), None)


@pytest.mark.parametrize("mode", MODES)
def test_a_coroutine_past_its_timeout_is_cancelled_on_the_loop(mode):
    cancelled = threading.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()  # nothing sets it
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with MODES[mode](), pytest.raises(TimeoutError, match=r"no answer within 0\.01 s"):
        loop.run(forever(), 0.01)
    assert cancelled.wait(PATIENCE_SECONDS)  # cancelled on the loop once the caller gave up
    assert loop.run(double(4), None) == 8  # and the loop goes on serving calls


@pytest.mark.parametrize(("mode", "most"), [("handed off", 0), ("driven", 1)])
def test_tool_calls_set_no_timer_each_on_the_loop(tmp_path, mode, most):
    """Handed off, the hand-off's own wait times a call out; driven, one alarm times a step's calls
    (set for the first call's deadline, set again when it rings only for a call still running)."""
    server = parse_server("notes", stdio_entry("notes"), tmp_path)
    connection = ServerConnection(server)
    connection.connect()
    background = loop.background_loop()
    timers: list[object] = []
    call_at = background.call_at
    background.call_at = lambda when, callback, *args, **kwargs: (  # type: ignore[method-assign]
        timers.append(callback) or call_at(when, callback, *args, **kwargs))
    try:
        with MODES[mode]():
            answers = [connection.call("echo", {"text": f"t{n}"}, 30.0).content[0].text for n in range(5)]
    finally:
        del background.call_at
        connection.close()
    assert answers == [f"t{n}" for n in range(5)]
    assert len(timers) <= most


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
    doorbell = loop._started().bell._read_end
    assert 1 <= reads.count(doorbell) <= 5  # one read of the doorbell per wake-up (rings may share one)


def test_a_driven_call_after_answered_ones_still_times_out_at_its_own_deadline():
    """The step's alarm, set for its first call's (long) deadline, is moved for a sooner one."""
    async def forever() -> None:
        await asyncio.Event().wait()  # nothing sets it

    with loop.driven():
        assert loop.run(double(1), 30.0) == 2
        with pytest.raises(TimeoutError, match=r"no answer within 0\.05 s"):
            loop.run(forever(), 0.05)
        assert loop.run(double(2), 30.0) == 4


def test_the_alarm_rung_for_an_answered_call_does_not_time_out_the_call_now_running():
    async def slow() -> str:
        await asyncio.sleep(1.0)
        return "answered"

    with loop.driven():
        assert loop.run(double(1), 0.5) == 2  # the alarm is set for 0.5 s from now...
        assert loop.run(slow(), 30.0) == "answered"  # ...and rings while this call runs


@pytest.mark.parametrize("mode", MODES)
def test_the_coroutine_runs_in_the_callers_context(mode):
    seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="the loop's")

    async def read() -> str:
        return seen.get()

    token = seen.set("the caller's")
    try:
        with MODES[mode]():
            assert loop.run(read(), None) == "the caller's"
    finally:
        seen.reset(token)


@pytest.mark.parametrize("mode", MODES)
def test_the_coroutine_names_asyncio_to_anyio_and_the_caller_is_left_unnamed(mode):
    """As under ``anyio.run``, anyio finds its library named (no sniffing per call of the SDK's);
    the name is set in the call's own context, so the calling thread, in no loop, still has none."""
    sniffio = pytest.importorskip("sniffio")

    async def named() -> str | None:
        return sniffio.current_async_library_cvar.get()

    with MODES[mode]():
        assert loop.run(named(), None) == "asyncio"
    assert sniffio.current_async_library_cvar.get() is None
    with pytest.raises(sniffio.AsyncLibraryNotFoundError):
        sniffio.current_async_library()


# -- a thread driving the loop -------------------------------------------------------------------

STEP_CALLS = 60


def voluntary_switches(thread: threading.Thread) -> int:
    """How many times ``thread`` has slept (given up the CPU to wait), from /proc."""
    status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
    return int(status.split("voluntary_ctxt_switches:")[1].split()[0])


def test_an_agents_tool_step_makes_its_mcp_calls_without_waking_the_loops_thread_per_call(tmp_path):
    """Handed off, each call wakes the background thread at least once (it slept 1.3 to 1.6 times a
    call); driven by the step's own thread, it is woken to park and to take the loop back."""
    script = [reply(*[call("notes__echo", {"text": f"t{n}"}, n) for n in range(STEP_CALLS)]), "done"]
    agent, _ = agent_for(tmp_path, {"notes": stdio_entry("notes")}, policy_rules(("all", "notes.*", "allow")),
                         script)
    background = next(thread for thread in threading.enumerate() if thread.name == "grapharc-mcp")
    try:
        before = voluntary_switches(background)
        out, _ = run(agent, tmp_path)
        slept = voluntary_switches(background) - before
    finally:
        close_sources(agent)
    assert told(out) == [f"t{n}" for n in range(STEP_CALLS)]
    assert slept < STEP_CALLS / 5


@pytest.fixture
def crash(tmp_path) -> Iterator[ServerConnection]:
    connection = ServerConnection(parse_server("crash", stdio_entry("crash"), tmp_path))
    connection.connect()
    yield connection
    connection.close()


def test_the_loop_goes_back_to_the_background_thread_when_the_step_ends(tmp_path):
    """A notification the server sends while the agent is idle is handled then, as before (nobody
    would run the loop to read it if the step kept it)."""
    grow = ServerConnection(parse_server("grow", stdio_entry("grow"), tmp_path))
    grow.connect()
    try:
        with loop.driven():
            assert grow.call("announce_later", {}, 30.0).content[0].text == "soon"
        announced = first_answer(grow.changed_tools)
    finally:
        grow.close()
    assert announced is not None and "later" in [tool.name for tool in announced]


def first_answer(ask: Callable[[], T | None]) -> T | None:
    """``ask()``'s first answer that is not None, asked every 10 ms for at most ``PATIENCE_SECONDS``."""
    pause = threading.Event()
    for _ in range(PATIENCE_SECONDS * 100):
        answer = ask()
        if answer is not None:
            return answer
        pause.wait(0.01)
    return None


def test_another_threads_call_is_answered_while_a_step_holds_the_loop_between_calls(crash):
    held, answered = threading.Event(), threading.Event()
    answers: list[str] = []

    def step() -> None:
        with loop.driven():
            answers.append(crash.call("echo", {"text": "first"}, 30.0).content[0].text)
            held.set()  # this thread holds the loop now, running nothing
            answered.wait(PATIENCE_SECONDS)
            answers.append(crash.call("echo", {"text": "third"}, 30.0).content[0].text)

    stepping = threading.Thread(target=step)
    stepping.start()
    assert held.wait(PATIENCE_SECONDS)
    answers.append(crash.call("echo", {"text": "second"}, 30.0).content[0].text)
    answered.set()
    stepping.join(PATIENCE_SECONDS)
    assert [answer.split()[0] for answer in answers] == ["first", "second", "third"]


def test_threads_in_steps_at_once_each_get_their_own_answers(crash):
    results: dict[int, list[str]] = {}

    def step(who: int) -> None:
        with loop.driven():
            results[who] = [crash.call("echo", {"text": f"{who}-{n}"}, 30.0).content[0].text.split()[0]
                            for n in range(20)]

    threads = [threading.Thread(target=step, args=(who,)) for who in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(PATIENCE_SECONDS)
    assert results == {who: [f"{who}-{n}" for n in range(20)] for who in range(3)}


def test_a_thread_already_running_an_event_loop_hands_its_calls_off():
    async def inside() -> int:
        with loop.driven():
            return loop.run(double(21), 30.0)  # blocks this loop's thread, as a sync tool would

    assert asyncio.run(inside()) == 42
