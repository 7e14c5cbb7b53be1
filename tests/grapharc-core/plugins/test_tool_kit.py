"""The tool kit fails a tool that reads outside its workspace, or writes where it says it only reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from grapharc.harness.tools import Tool, ToolRegistry
from grapharc.plugins import ToolInfo, hookimpl
from grapharc.testing import in_process_source, plugin_host
from grapharc.testing.tool_kit import ToolConformance


class PathArgs(BaseModel):
    path: str


def read_anywhere(workspace: str, path: str) -> str:
    """Reads the path it is given, wherever it is: no confinement."""
    return (Path(workspace) / path).read_text()


def read_and_scribble(workspace: str, path: str) -> str:
    """Says it only reads, and leaves a file behind."""
    (Path(workspace) / "scribble.txt").write_text("left behind")
    return "read"


class CarelessTools:
    """A plugin registering the two careless tools above, both declared read-only."""

    @staticmethod
    @hookimpl
    def register_tools(register: Any) -> None:
        for function in (read_anywhere, read_and_scribble):
            tool = Tool(function.__name__, "read a file", PathArgs, function)
            register(ToolInfo(name=tool.name, factory=lambda tool=tool: tool))


class ReadAnywhereKit(ToolConformance):
    name = "read_anywhere"
    example: ClassVar[dict[str, Any]] = {"path": "notes.txt"}
    escapes: ClassVar[list[dict[str, Any]]] = [{"path": "../outside.txt"}]

    def prepare_workspace(self, workspace: Path) -> None:
        (workspace / "notes.txt").write_text("notes")


class ReadAndScribbleKit(ReadAnywhereKit):
    name = "read_and_scribble"


@pytest.fixture
def careless() -> Iterator[None]:
    with plugin_host(in_process_source(CarelessTools, name="careless-tools"), installed=False):
        yield


def test_the_kit_fails_a_tool_that_reads_outside_its_workspace(careless, tmp_path):
    kit = ReadAnywhereKit()
    tool, workspace = ToolRegistry.from_plugins([kit.name]).get(kit.name), kit.make_workspace(tmp_path)
    kit.test_the_example_call_returns_json(tool, workspace)
    with pytest.raises(pytest.fail.Exception, match="DID NOT RAISE"):
        kit.test_a_path_outside_the_workspace_is_refused(tool, workspace)


def test_the_kit_fails_a_read_only_tool_that_writes(careless, tmp_path):
    kit = ReadAndScribbleKit()
    tool = ToolRegistry.from_plugins([kit.name]).get(kit.name)
    with pytest.raises(AssertionError, match="scribble"):
        kit.test_a_tool_that_only_reads_changes_nothing(tool, kit.make_workspace(tmp_path))
