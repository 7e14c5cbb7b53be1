"""A conformance kit for executor plugins: one ``run(tool, args)`` contract for all of them.

Subclass ``ExecutorConformance`` in a class pytest collects and override
``make_executor()``. Tools used here are module-level functions, so executors
that must resolve a tool by import path (a container) can run them too.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import pytest

from grapharc.executors import ToolArgumentError


class ToolFailed(Exception):
    """Raised by the failing tool below; executors must not swallow a tool's error."""


def add(a: int, b: int) -> int:
    """A tool that adds two numbers."""
    return a + b


def echo(text: str = "default") -> str:
    """A tool with a default argument."""
    return text


def fail(reason: str) -> None:
    """A tool that always raises."""
    raise ToolFailed(reason)


class ExecutorConformance(ABC):
    """The executor contract as pytest tests; subclass it and implement ``make_executor``."""

    @abstractmethod
    def make_executor(self) -> Any:
        """Return a fresh executor under test."""

    def test_it_has_a_name(self) -> None:
        assert isinstance(self.make_executor().name, str) and self.make_executor().name

    def test_it_runs_a_tool_with_keyword_arguments_and_returns_its_result(self) -> None:
        assert self.make_executor().run(add, {"a": 2, "b": 40}) == 42

    def test_defaults_apply_when_an_argument_is_omitted(self) -> None:
        assert self.make_executor().run(echo, {}) == "default"

    @pytest.mark.parametrize("args", [["a", "b"], "a=1", None, {1: "not a name"}])
    def test_arguments_that_are_not_a_mapping_of_names_are_refused(self, args: Any) -> None:
        with pytest.raises(ToolArgumentError):
            self.make_executor().run(add, args)

    def test_a_tools_own_error_reaches_the_caller(self) -> None:
        with pytest.raises(Exception, match="deliberate"):
            self.make_executor().run(fail, {"reason": "deliberate"})
