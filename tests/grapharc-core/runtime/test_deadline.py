"""Deadlines interrupt a running node: SIGALRM on the main thread, async exceptions elsewhere.

Bounds on elapsed time are deliberately loose: "cut off" means well under the 30 s the node
asked for, never a precise figure.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from grapharc.runtime.deadline import (
    DeadlineInterrupt,
    InvalidDeadlineError,
    NodeTimeoutError,
    async_deadline,
    deadline,
)

CUT_OFF = 10.0  # seconds; anything under this is "cut off" for a 30 s sleep


@pytest.fixture
def alarm_state() -> Iterator[None]:
    """Put back whatever SIGALRM handler and timer were there (pytest-timeout uses them)."""
    handler = signal.getsignal(signal.SIGALRM)
    delay, interval = signal.getitimer(signal.ITIMER_REAL)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, handler)
    if delay > 0:
        signal.setitimer(signal.ITIMER_REAL, delay, interval)


def run_in_thread(target: Callable[[], Any]) -> Any:
    """Run ``target`` on a fresh thread and return what it returned or raise what it raised."""
    outcome: dict[str, Any] = {}

    def wrapper() -> None:
        try:
            outcome["value"] = target()
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=wrapper)
    thread.start()
    thread.join(60)
    assert not thread.is_alive()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def test_a_node_sleeping_30s_on_the_main_thread_is_cut_off_at_its_deadline() -> None:
    started = time.monotonic()
    with pytest.raises(NodeTimeoutError) as caught, deadline(0.2, node="slow"):
        time.sleep(30)
    assert time.monotonic() - started < CUT_OFF
    assert (caught.value.node, caught.value.seconds) == ("slow", 0.2)
    assert isinstance(caught.value.__cause__, DeadlineInterrupt)


def test_a_node_polling_on_a_worker_thread_is_cut_off_at_its_deadline() -> None:
    def node() -> None:
        with deadline(0.2, node="worker"):
            for _ in range(600):  # 30 s in short sleeps
                time.sleep(0.05)

    started = time.monotonic()
    with pytest.raises(NodeTimeoutError) as caught:
        run_in_thread(node)
    assert time.monotonic() - started < CUT_OFF
    assert caught.value.node == "worker"


FRESH_WORKER_DEADLINE = """
import sys, threading, time
import grapharc.runtime.graph
from grapharc.runtime.deadline import NodeTimeoutError, deadline
print("ctypes before:", "ctypes" in sys.modules)
caught = []
def node():
    try:
        with deadline(0.2, node="worker"):
            for _ in range(600):
                time.sleep(0.05)
    except NodeTimeoutError as exc:
        caught.append(exc.node)
thread = threading.Thread(target=node)
thread.start()
thread.join(60)
print("caught:", caught)
"""


def test_the_runtime_loads_ctypes_only_when_a_worker_deadline_fires() -> None:
    # every run imports the runtime (a CLI start pays for it); ctypes only sends the interrupt
    done = subprocess.run([sys.executable, "-c", FRESH_WORKER_DEADLINE], capture_output=True, text=True,
                          timeout=120, check=False)

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["ctypes before: False", "caught: ['worker']"]


def test_on_a_worker_thread_the_interrupt_lands_when_a_blocking_call_returns() -> None:
    reached: list[str] = []

    def node() -> None:
        with deadline(0.1, node="blocked"):
            time.sleep(1.0)  # one C call: the async exception cannot unwind it
            reached.append("after the call")

    started = time.monotonic()
    with pytest.raises(NodeTimeoutError):
        run_in_thread(node)
    assert time.monotonic() - started >= 0.9
    assert reached == []


def test_the_previous_sigalrm_handler_and_timer_are_restored(alarm_state: None) -> None:
    def previous(signum: int, frame: object) -> None:
        raise AssertionError("the previous timer must not fire during this test")

    signal.signal(signal.SIGALRM, previous)
    signal.setitimer(signal.ITIMER_REAL, 60)
    with deadline(5, node="quick"):
        assert signal.getsignal(signal.SIGALRM) is not previous
    assert signal.getsignal(signal.SIGALRM) is previous
    left, _ = signal.getitimer(signal.ITIMER_REAL)
    assert 30 < left <= 60


def test_an_earlier_timer_due_inside_the_block_reaches_its_own_handler(alarm_state: None) -> None:
    fired: list[float] = []
    signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(time.monotonic()))
    signal.setitimer(signal.ITIMER_REAL, 0.1)
    started = time.monotonic()
    with pytest.raises(NodeTimeoutError), deadline(0.5, node="n"):
        time.sleep(30)
    assert len(fired) == 1
    assert time.monotonic() - started < CUT_OFF  # our deadline still held after it


TINY = [1e-320, 1e-7]
"""Deadlines that expire while they are being armed (``--max-seconds 1e-320`` is in range)."""


@pytest.mark.parametrize("seconds", TINY)
def test_a_deadline_expiring_while_armed_is_not_taken_for_the_earlier_timer(
        seconds: float, alarm_state: None) -> None:
    fired: list[int] = []
    signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    signal.setitimer(signal.ITIMER_REAL, 60)
    for _ in range(50):
        with contextlib.suppress(NodeTimeoutError), deadline(seconds, node="n"):
            sum(range(1000))
    assert fired == []  # under pytest-timeout, a spurious "Timeout" in the next statement
    left, _ = signal.getitimer(signal.ITIMER_REAL)
    assert 30 < left <= 60


@pytest.mark.parametrize("seconds", TINY)
def test_a_deadline_expiring_while_armed_leaves_no_alarm_to_kill_the_process(seconds: float) -> None:
    """With no earlier handler, a stray SIGALRM is the default action: the process dies."""
    code = ("from contextlib import suppress\n"
            "from grapharc.runtime.deadline import NodeTimeoutError, deadline\n"
            "for _ in range(50):\n"
            f"    with suppress(NodeTimeoutError), deadline({seconds!r}, node='n'):\n"
            "        sum(range(1000))\n"
            "import time; time.sleep(0.2); print('alive')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout) == (0, "alive\n"), result.stderr


def test_nested_deadlines_each_report_their_own_node(alarm_state: None) -> None:
    handler = signal.getsignal(signal.SIGALRM)
    with (
        pytest.raises(NodeTimeoutError) as inner_first,
        deadline(5, node="outer"),
        deadline(0.2, node="inner"),
    ):
        time.sleep(30)
    assert inner_first.value.node == "inner"
    with (
        pytest.raises(NodeTimeoutError) as outer_first,
        deadline(0.2, node="outer"),
        deadline(5, node="inner"),
    ):
        time.sleep(30)
    assert outer_first.value.node == "outer"
    assert signal.getsignal(signal.SIGALRM) is handler


def test_nested_deadlines_on_a_worker_thread_each_report_their_own_node() -> None:
    def nested(outer: float, inner: float) -> None:
        with deadline(outer, node="outer"), deadline(inner, node="inner"):
            for _ in range(600):
                time.sleep(0.05)

    with pytest.raises(NodeTimeoutError) as inner_first:
        run_in_thread(lambda: nested(5, 0.2))
    assert inner_first.value.node == "inner"
    with pytest.raises(NodeTimeoutError) as outer_first:
        run_in_thread(lambda: nested(0.2, 5))
    assert outer_first.value.node == "outer"


@pytest.mark.parametrize("seconds", [math.inf, 1e10, 1e300])
def test_infinite_and_absurd_deadlines_do_not_break_later_ones(seconds: float, alarm_state: None) -> None:
    handler = signal.getsignal(signal.SIGALRM)
    with deadline(seconds, node="forever"):
        pass
    assert signal.getsignal(signal.SIGALRM) is handler
    started = time.monotonic()
    with pytest.raises(NodeTimeoutError), deadline(0.2, node="later"):
        time.sleep(30)
    assert time.monotonic() - started < CUT_OFF


def test_absurd_deadlines_on_a_worker_thread_do_not_fire() -> None:
    def node() -> str:
        with deadline(math.inf, node="forever"), deadline(1e10, node="long"):
            time.sleep(0.2)
        return "done"

    assert run_in_thread(node) == "done"


def test_except_exception_in_the_node_cannot_swallow_the_interrupt() -> None:
    swallowed: list[Exception] = []
    with pytest.raises(NodeTimeoutError), deadline(0.2, node="n"):
        try:
            time.sleep(30)
        except Exception as exc:  # what a retry wrapper does
            swallowed.append(exc)
    assert swallowed == []


@pytest.mark.parametrize("where", ["main", "worker"])
def test_a_node_that_swallows_the_interrupt_still_fails_at_the_boundary(where: str) -> None:
    def node() -> str:
        with deadline(0.2, node="stubborn"):
            try:
                for _ in range(600):
                    time.sleep(0.05)
            except BaseException:
                pass
            return "result that must not pass"

    with pytest.raises(NodeTimeoutError):
        node() if where == "main" else run_in_thread(node)


def test_a_worker_deadline_cannot_fire_after_its_block_has_ended() -> None:
    def node() -> str:
        for _ in range(200):  # blocks that end right around their deadline
            try:
                with deadline(0.002, node="racy"):
                    time.sleep(0.002)
            except (NodeTimeoutError, DeadlineInterrupt):
                pass
        with deadline(0.05, node="quick"):
            pass
        for _ in range(30):  # a stray interrupt would land in one of these sleeps
            time.sleep(0.01)
        return "no stray interrupt"

    assert run_in_thread(node) == "no stray interrupt"


def test_no_deadline_installs_nothing(alarm_state: None) -> None:
    handler = signal.getsignal(signal.SIGALRM)
    timer = signal.getitimer(signal.ITIMER_REAL)
    with deadline(None, node="free"):
        assert signal.getsignal(signal.SIGALRM) is handler
        assert signal.getitimer(signal.ITIMER_REAL)[1] == timer[1]


@pytest.mark.parametrize("seconds", [0, 0.0, -1.5])
def test_a_deadline_with_no_time_left_refuses_to_start_the_block(seconds: float) -> None:
    ran: list[bool] = []
    with pytest.raises(NodeTimeoutError), deadline(seconds, node="late"):
        ran.append(True)
    assert ran == []


@pytest.mark.parametrize("seconds", [math.nan, "5", True])
def test_a_deadline_that_is_not_a_number_of_seconds_is_refused(seconds: Any) -> None:
    with pytest.raises(InvalidDeadlineError, match="'n'"):
        deadline(seconds, node="n")
    with pytest.raises(InvalidDeadlineError):
        async_deadline(seconds, node="n")


def test_a_failure_while_arming_leaks_no_handler(alarm_state: None, monkeypatch: pytest.MonkeyPatch) -> None:
    handler = signal.getsignal(signal.SIGALRM)

    def broken_setitimer(*args: Any) -> Any:
        raise OSError("setitimer failed")

    monkeypatch.setattr(signal, "setitimer", broken_setitimer)
    with pytest.raises(OSError, match="setitimer failed"), deadline(1, node="n"):
        pass
    monkeypatch.undo()
    assert signal.getsignal(signal.SIGALRM) is handler


def test_an_async_deadline_cancels_an_awaiting_coroutine() -> None:
    async def node() -> None:
        async with async_deadline(0.2, node="async-node"):
            await asyncio.sleep(30)

    started = time.monotonic()
    with pytest.raises(NodeTimeoutError) as caught:
        asyncio.run(node())
    assert time.monotonic() - started < CUT_OFF
    assert caught.value.node == "async-node"


def test_a_timeout_error_raised_by_the_node_itself_passes_through_unchanged() -> None:
    async def node() -> None:
        async with async_deadline(30, node="n"):
            raise TimeoutError("the provider timed out")

    with pytest.raises(TimeoutError, match="provider") as caught:
        asyncio.run(node())
    assert not isinstance(caught.value, NodeTimeoutError)


def test_an_async_node_that_swallows_cancellation_still_fails_at_the_boundary() -> None:
    async def node() -> str:
        async with async_deadline(0.2, node="stubborn"):
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(30)
            return "result that must not pass"

    with pytest.raises(NodeTimeoutError):
        asyncio.run(node())


def test_async_deadlines_that_do_not_expire_change_nothing() -> None:
    async def node() -> str:
        async with (
            async_deadline(None, node="free"),
            async_deadline(math.inf, node="inf"),
            async_deadline(30, node="n"),
        ):
            await asyncio.sleep(0)
        return "done"

    assert asyncio.run(node()) == "done"


def test_a_timeout_error_survives_pickling() -> None:
    error = pickle.loads(pickle.dumps(NodeTimeoutError("n", 1.5)))
    assert (error.node, error.seconds) == ("n", 1.5)
