"""A conformance kit for executor plugins: one ``run(tool, args, *, workspace, timeout)`` contract.

Subclass ``ExecutorConformance`` in a class pytest collects and override ``make_executor()``.
The tools here are module-level functions with JSON arguments and results, so executors that
must resolve a tool by import path in another process (a sandbox, a container) can run them too.
An executor that runs tools in this very process sets ``in_another_process = False``: it
cannot kill a timed-out tool's process, and it passes arguments and results as they are.
"""

from __future__ import annotations

import os
import signal
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from grapharc.errors import GraphARCError
from grapharc.harness.executors import ToolArgumentError, ToolFailedError, ToolTimeoutError
from grapharc.harness.tools import SideEffect, Tool


class ToolFailed(Exception):
    """Raised by the failing tool below; executors must not swallow a tool's error."""


class AddArgs(BaseModel):
    a: int
    b: int


class EchoArgs(BaseModel):
    text: str = "default"


class FailArgs(BaseModel):
    reason: str


class SleepArgs(BaseModel):
    seconds: float


class MirrorArgs(BaseModel):
    value: Any


class TouchArgs(BaseModel):
    name: str


class BlobArgs(BaseModel):
    data: bytes


def add(workspace: str, a: int, b: int) -> int:
    """A tool that adds two numbers."""
    return a + b


def echo(workspace: str, text: str = "default") -> dict[str, Any]:
    """A tool that returns its argument and the workspace it was given, as JSON data."""
    return {"text": text, "workspace": workspace}


def fail(workspace: str, reason: str) -> None:
    """A tool that always raises."""
    raise ToolFailed(reason)


def sleep(workspace: str, seconds: float) -> str:
    """A tool that takes its time."""
    time.sleep(seconds)
    return "woke"


def hang(workspace: str, seconds: float) -> str:
    """A tool that leaves its pid in the workspace, then takes its time."""
    Path(workspace, "pid").write_text(str(os.getpid()))
    time.sleep(seconds)
    return "woke"


def stubborn(workspace: str, seconds: float) -> str:
    """``hang``, ignoring SIGTERM while it waits (the handler is put back if it ever returns)."""
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        return hang(workspace, seconds)
    finally:
        signal.signal(signal.SIGTERM, previous)


def mirror(workspace: str, value: Any) -> Any:
    """A tool that returns its argument."""
    return value


def touch(workspace: str, name: str) -> str:
    """A tool that creates a file in the workspace, to show whether it ran."""
    Path(workspace, name).write_text("ran")
    return name


def unserialisable(workspace: str, value: Any) -> Any:
    """A tool whose result JSON cannot carry, or would carry as something else."""
    return {"set": {value}, "tuple": (value, value), "int-keyed": {1: value},
            "nan": float("nan"), "inf": float("inf")}[value]


def blob(workspace: str, data: bytes) -> int:
    """A tool whose validated argument is no JSON value; it leaves a mark if it runs."""
    Path(workspace, "blob-ran").write_text("ran")
    return len(data)


ADD = Tool("add", "add two numbers", AddArgs, add)
ECHO = Tool("echo", "echo the text", EchoArgs, echo)
FAIL = Tool("fail", "always fails", FailArgs, fail, side_effect=SideEffect.WRITE)
SLEEP = Tool("sleep", "sleep a while", SleepArgs, sleep)
HANG = Tool("hang", "hang a while", SleepArgs, hang)
STUBBORN = Tool("stubborn", "hang a while, ignoring SIGTERM", SleepArgs, stubborn)
MIRROR = Tool("mirror", "return the value", MirrorArgs, mirror)
TOUCH = Tool("touch", "create a file", TouchArgs, touch, side_effect=SideEffect.WRITE)
UNSERIALISABLE = Tool("unserialisable", "return what JSON would lose or change", MirrorArgs, unserialisable)
BLOB = Tool("blob", "count bytes", BlobArgs, blob)
JSON_VALUES = [None, True, 0, -(2**63), 2**70, 1.5, "", "naïve ☃ \u0000 \"quoted\"\n",
               [], {}, [1, "two", [3.0, None], {"k": False}], {"nested": {"list": [{"x": "y"}] * 3}}]


class ExecutorConformance(ABC):
    """The executor contract as pytest tests; subclass it and implement ``make_executor``."""

    in_another_process: ClassVar[bool] = True
    """Whether tools run in another process: JSON data only, importable functions, killable calls."""

    @abstractmethod
    def make_executor(self) -> Any:
        """Return a fresh executor under test."""

    @pytest.fixture
    def workspace(self, tmp_path: Path) -> Path:
        return tmp_path

    def test_it_has_a_name(self) -> None:
        assert isinstance(self.make_executor().name, str) and self.make_executor().name

    def test_it_runs_a_tool_with_validated_arguments_and_returns_its_result(self, workspace: Path) -> None:
        assert self.make_executor().run(ADD, {"a": 2, "b": "40"}, workspace=workspace) == 42

    def test_the_tool_gets_the_workspace_and_defaults_apply(self, workspace: Path) -> None:
        result = self.make_executor().run(ECHO, {}, workspace=workspace)
        assert result == {"text": "default", "workspace": str(workspace)}

    @pytest.mark.parametrize("args", [["a", "b"], "a=1", None, {1: "not a name"}, {"a": 1},
                                      {"a": "x", "b": 1}])
    def test_arguments_that_do_not_fit_the_tool_are_refused_before_it_runs(self, args: Any,
                                                                            workspace: Path) -> None:
        with pytest.raises(ToolArgumentError):
            self.make_executor().run(ADD, args, workspace=workspace)

    def test_a_call_that_does_not_fit_never_runs(self, workspace: Path) -> None:
        with pytest.raises(ToolArgumentError, match="'touch'"):
            self.make_executor().run(TOUCH, {"name": 5}, workspace=workspace)
        assert list(workspace.iterdir()) == []

    def test_a_tools_own_error_reaches_the_caller_with_its_message(self, workspace: Path) -> None:
        with pytest.raises(Exception, match="deliberate"):
            self.make_executor().run(FAIL, {"reason": "deliberate"}, workspace=workspace)

    def test_a_tools_error_names_its_type_or_is_the_error_itself(self, workspace: Path) -> None:
        with pytest.raises((ToolFailed, ToolFailedError)) as raised:
            self.make_executor().run(FAIL, {"reason": "deliberate"}, workspace=workspace)
        if isinstance(raised.value, ToolFailedError):
            assert (raised.value.tool, raised.value.exception_type) == ("fail", "ToolFailed")
            assert raised.value.message == "deliberate"

    @pytest.mark.parametrize("value", JSON_VALUES)
    def test_json_arguments_and_results_survive_the_trip(self, value: Any, workspace: Path) -> None:
        assert self.make_executor().run(MIRROR, {"value": value}, workspace=workspace) == value

    @pytest.mark.parametrize("kind", ["set", "tuple", "int-keyed", "nan", "inf"])
    def test_a_result_that_is_not_plain_json_is_refused_naming_the_tool(self, kind: str,
                                                                         workspace: Path) -> None:
        if not self.in_another_process:
            pytest.skip("results are handed back as they are in this process")
        with pytest.raises(GraphARCError, match="'unserialisable'"):
            self.make_executor().run(UNSERIALISABLE, {"value": kind}, workspace=workspace)

    def test_arguments_that_are_not_json_are_refused_before_the_tool_runs(self, workspace: Path) -> None:
        if not self.in_another_process:
            pytest.skip("arguments are handed over as they are in this process")
        with pytest.raises(GraphARCError, match="'blob'"):
            self.make_executor().run(BLOB, {"data": b"bytes"}, workspace=workspace)
        assert not (workspace / "blob-ran").exists()

    def test_a_function_without_an_import_path_is_refused_before_it_runs(self, workspace: Path) -> None:
        if not self.in_another_process:
            pytest.skip("any callable runs in this process")
        marks: list[str] = []
        closure = Tool("closure", "a lambda", EchoArgs, lambda workspace, text: marks.append(text))
        with pytest.raises(GraphARCError, match="'closure'"):
            self.make_executor().run(closure, {}, workspace=workspace)
        assert marks == []

    def test_a_call_past_its_timeout_is_stopped(self, workspace: Path) -> None:
        with pytest.raises(ToolTimeoutError, match="'sleep'"):
            self.make_executor().run(SLEEP, {"seconds": 30}, workspace=workspace, timeout=0.5)

    def test_a_tool_that_ignores_sigterm_is_stopped_at_its_timeout(self, workspace: Path) -> None:
        with pytest.raises(ToolTimeoutError, match="'stubborn'"):
            self.make_executor().run(STUBBORN, {"seconds": 30}, workspace=workspace, timeout=0.5)

    def _time_to_start(self, workspace: Path) -> float:
        """A timeout the tool surely starts within (and leaves its pid) on this machine as loaded
        now: three times a whole quick call here, and at least two seconds."""
        began = time.monotonic()
        self.make_executor().run(ECHO, {}, workspace=workspace)
        return max(2.0, 3 * (time.monotonic() - began))

    @pytest.mark.parametrize("tool", [HANG, STUBBORN], ids=["hung", "ignoring-sigterm"])
    def test_a_timed_out_tools_process_is_gone(self, tool: Tool, workspace: Path) -> None:
        if not self.in_another_process:
            pytest.skip("the tool ran in the caller's own process")
        with pytest.raises(ToolTimeoutError):
            self.make_executor().run(tool, {"seconds": 60}, workspace=workspace,
                                     timeout=self._time_to_start(workspace))
        pid = int((workspace / "pid").read_text())
        assert pid != os.getpid()
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
