"""grapharc-tools, as installed, passes the plugin kit and its read-only tools the tool kit
(``grapharc.testing.plugin_kit`` and ``tool_kit``, on the fixtures of GraphARC's pytest plugin)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from grapharc.testing.plugin_kit import InstalledPluginConformance
from grapharc.testing.tool_kit import ToolConformance

ESCAPES = [{"path": "../outside.txt"}, {"path": "/etc/hostname"}]


class TestInstalledTools(InstalledPluginConformance):
    distribution = "grapharc-tools"
    registers: ClassVar[dict[str, list[str]]] = {
        "executors": ["container", "sandboxed"],
        "tools": ["edit_file", "glob", "grep", "list_dir", "read_file", "run_command", "write_file"]}


class TestReadFile(ToolConformance):
    name = "read_file"
    example: ClassVar[dict[str, Any]] = {"path": "notes.txt"}
    escapes = ESCAPES

    def prepare_workspace(self, workspace: Path) -> None:
        (workspace / "notes.txt").write_text("one line\n")


class TestListDir(ToolConformance):
    name = "list_dir"
    example: ClassVar[dict[str, Any]] = {"path": "."}
    escapes: ClassVar[list[dict[str, Any]]] = [{"path": ".."}, {"path": "/etc"}]
