"""A conformance kit for tool plugins: the tool an installed plugin registers, called as an agent would.

Subclass ``ToolConformance`` in a class pytest collects, with the tool's registered ``name``,
the arguments of one call that succeeds (``example``, in a workspace ``prepare_workspace``
fills) and, for a tool that takes paths, argument sets naming a place outside the workspace
(``escapes``), each of which it must refuse. Calls go through core's ``local`` executor, the
way an agent calls tools: arguments validated against the tool's model, the workspace given.

    class TestWordCount(ToolConformance):
        name = "acme_word_count"
        example = {"path": "notes.txt"}
        escapes = [{"path": "../outside.txt"}]

        def prepare_workspace(self, workspace):
            (workspace / "notes.txt").write_text("three small words")
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from grapharc.harness.executors import LocalExecutor
from grapharc.harness.tools import SideEffect, Tool, ToolArgumentError, ToolRegistry
from grapharc.plugins import PluginHost


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` and its bytes."""
    return {str(path.relative_to(folder)): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


class ToolConformance:
    """The tool contract as pytest tests; set ``name`` and ``example`` (and ``escapes``)."""

    name: ClassVar[str]
    example: ClassVar[dict[str, Any]]
    escapes: ClassVar[list[dict[str, Any]]] = []

    def prepare_workspace(self, workspace: Path) -> None:
        """Put in ``workspace`` what ``example`` needs (nothing, by default)."""

    @pytest.fixture
    def tool(self, grapharc_plugins: PluginHost) -> Tool:
        """The tool as an agent gets it: built by the factory the installed plugin registered."""
        return ToolRegistry.from_plugins([self.name]).get(self.name)

    @pytest.fixture
    def workspace(self, tmp_path: Path) -> Path:
        """A workspace inside ``tmp_path``, prepared; the rest of ``tmp_path`` is outside it."""
        return self.make_workspace(tmp_path)

    def make_workspace(self, tmp_path: Path) -> Path:
        """Make the ``workspace`` fixture's folder in ``tmp_path``, with a file beside it."""
        folder = tmp_path / "workspace"
        folder.mkdir()
        (tmp_path / "outside.txt").write_text("outside the workspace")
        self.prepare_workspace(folder)
        return folder

    def call(self, workspace: Path, arguments: Any) -> Any:
        """Call the installed tool with ``arguments`` in ``workspace``, as an agent would."""
        return LocalExecutor().run(ToolRegistry.from_plugins([self.name]).get(self.name), arguments,
                                   workspace=workspace)

    def test_the_tool_has_its_registered_name_and_says_what_it_does(self, tool: Tool) -> None:
        assert tool.name == self.name and tool.description.strip()

    def test_a_model_is_shown_a_json_schema_of_an_object(self, tool: Tool) -> None:
        schema = json.loads(json.dumps(tool.schema()))
        assert schema["function"]["parameters"]["type"] == "object"

    def test_the_example_call_returns_json(self, tool: Tool, workspace: Path) -> None:
        json.dumps(self.call(workspace, self.example))

    @pytest.mark.parametrize("arguments", [["not", "named"], "text", None])
    def test_arguments_that_are_not_an_object_are_refused(self, tool: Tool, workspace: Path,
                                                          arguments: Any) -> None:
        with pytest.raises(ToolArgumentError):
            self.call(workspace, arguments)

    def test_a_tool_that_only_reads_changes_nothing(self, tool: Tool, workspace: Path) -> None:
        if tool.side_effect is not SideEffect.READ:
            pytest.skip(f"the tool declares side effect {tool.side_effect.value}")
        before = snapshot(workspace.parent)
        self.call(workspace, self.example)
        assert snapshot(workspace.parent) == before

    def test_a_path_outside_the_workspace_is_refused(self, tool: Tool, workspace: Path) -> None:
        if not self.escapes:
            pytest.skip("the tool takes no paths (no escapes given)")
        before = snapshot(workspace.parent)
        for arguments in self.escapes:
            with pytest.raises(Exception):  # noqa: B017 - any refusal will do, as long as it refuses
                self.call(workspace, arguments)
        assert snapshot(workspace.parent) == before
