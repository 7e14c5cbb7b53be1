"""grapharc-tools' file tools: built as the ToolInfo contract says, and confined to their workspace."""

from __future__ import annotations

import inspect

import pytest

from grapharc.plugins import registry, resolve_factory
from grapharc.tools.files import ToolInputError
from grapharc.tools.workspace import WorkspaceEscape, WorkspaceNotADirectoryError

TOOLS = ("read_file", "write_file", "list_dir")


def build(name: str, workspace):
    entry = registry("tools")[name]
    return resolve_factory(entry.item.factory, plugin=entry.distribution)(workspace)


def test_grapharc_tools_registers_its_three_file_tools():
    entries = registry("tools")
    assert {name: entries[name].distribution for name in TOOLS} == dict.fromkeys(TOOLS, "grapharc-tools")


@pytest.mark.parametrize("name", TOOLS)
def test_each_tool_factory_takes_one_workspace_and_returns_the_tool(name, tmp_path):
    entry = registry("tools")[name]
    factory = resolve_factory(entry.item.factory, plugin=entry.distribution)
    assert list(inspect.signature(factory).parameters) == ["workspace"]
    tool = factory(tmp_path)
    assert callable(tool) and tool.__name__ == name


def test_the_built_tools_write_read_and_list_inside_the_workspace(tmp_path):
    assert build("write_file", tmp_path)(path="notes/a.txt", content="hello") \
        == "wrote 5 characters to notes/a.txt"
    assert build("read_file", tmp_path)(path="notes/a.txt") == "hello"
    assert build("list_dir", tmp_path)() == ["notes/"]


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "notes/../../x", "", "a\x00b"])
@pytest.mark.parametrize("name", TOOLS)
def test_no_tool_reaches_outside_its_workspace(name, path, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    args = {"path": path, "content": "x"} if name == "write_file" else {"path": path}
    with pytest.raises(WorkspaceEscape):
        build(name, workspace)(**args)
    assert not (tmp_path / "outside.txt").exists()


def test_a_workspace_that_is_not_a_directory_is_refused_by_name(tmp_path):
    missing = tmp_path / "missing"
    with pytest.raises(WorkspaceNotADirectoryError, match="is not a directory") as caught:
        build("read_file", missing)
    assert caught.value.code == "WorkspaceNotADirectoryError" and caught.value.hint


def test_reading_a_directory_is_a_tool_input_error(tmp_path):
    (tmp_path / "sub").mkdir()
    with pytest.raises(ToolInputError, match="'sub' is not a file"):
        build("read_file", tmp_path)(path="sub")
