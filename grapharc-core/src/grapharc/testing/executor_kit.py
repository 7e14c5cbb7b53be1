"""A conformance kit for executor plugins: one ``run(tool, args, *, workspace, timeout)`` contract.

Subclass ``ExecutorConformance`` in a class pytest collects and override ``make_executor()``.
The tools here are module-level functions with JSON arguments and results, so executors that
must resolve a tool by import path in another process (a sandbox, a container) can run them too.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from grapharc.executors import ToolArgumentError, ToolTimeoutError
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


ADD = Tool("add", "add two numbers", AddArgs, add)
ECHO = Tool("echo", "echo the text", EchoArgs, echo)
FAIL = Tool("fail", "always fails", FailArgs, fail, side_effect=SideEffect.WRITE)
SLEEP = Tool("sleep", "sleep a while", SleepArgs, sleep)


class ExecutorConformance(ABC):
    """The executor contract as pytest tests; subclass it and implement ``make_executor``."""

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

    def test_a_tools_own_error_reaches_the_caller_with_its_message(self, workspace: Path) -> None:
        with pytest.raises(Exception, match="deliberate"):
            self.make_executor().run(FAIL, {"reason": "deliberate"}, workspace=workspace)

    def test_a_call_past_its_timeout_is_stopped(self, workspace: Path) -> None:
        with pytest.raises(ToolTimeoutError, match="'sleep'"):
            self.make_executor().run(SLEEP, {"seconds": 30}, workspace=workspace, timeout=0.5)
