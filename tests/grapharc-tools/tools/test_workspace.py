"""Confinement is done by the tools themselves: no path argument reaches outside the workspace."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grapharc.harness.tools import ToolArgumentError
from grapharc.tools import ToolInputError, Workspace, WorkspaceEscape
from grapharc.tools.workspace import WorkspaceNotADirectoryError

ESCAPES = {
    "traversal": "../secret.txt",
    "deep traversal": "sub/../../secret.txt",
    "absolute outside": "/etc/passwd",
    "absolute inside": "{ws}/inside.txt",
    "symlink out": "link-out.txt",
    "symlinked parent dir": "dir-out/secret.txt",
    "sibling prefix": "../ws-evil/loot.txt",
    "sibling prefix through symlink": "evil/loot.txt",
    "NUL byte": "inside.txt\x00.py",
}


@pytest.fixture
def planted(workspace: Path) -> Path:
    """The workspace with a file inside and symlinks that point out of it."""
    (workspace / "inside.txt").write_text("inside\n")
    (workspace / "sub").mkdir()
    (workspace / "link-out.txt").symlink_to(workspace.parent / "secret.txt")
    (workspace / "dir-out").symlink_to(workspace.parent)
    (workspace / "evil").symlink_to(workspace.parent / "ws-evil")
    (workspace / "link-in.txt").symlink_to(workspace / "inside.txt")
    return workspace


@pytest.mark.parametrize("path", ESCAPES.values(), ids=ESCAPES.keys())
def test_each_way_out_is_a_workspace_escape(planted, path):
    with pytest.raises(WorkspaceEscape):
        Workspace(planted).resolve(path.format(ws=planted))


@pytest.mark.parametrize("path", ESCAPES.values(), ids=ESCAPES.keys())
@pytest.mark.parametrize("tool", ["read_file", "write_file", "edit_file", "list_dir", "grep"])
def test_no_tool_follows_a_way_out(planted, call, tool, path):
    arguments = {"read_file": {}, "list_dir": {}, "grep": {"pattern": "o"},
                 "write_file": {"content": "x"}, "edit_file": {"old": "outside", "new": "pwned"}}[tool]
    before = _outside(planted)
    with pytest.raises(WorkspaceEscape):
        call(tool, path=path.format(ws=planted), **arguments)
    assert _outside(planted) == before


def test_the_sibling_sharing_the_prefix_is_outside_though_its_name_starts_with_the_workspace(planted):
    sibling = Path(str(planted) + "-evil")
    assert str(sibling).startswith(str(planted))
    assert not Workspace(planted).contains(sibling)


def test_paths_that_stay_inside_resolve_to_their_real_place(planted):
    root = Workspace(planted)
    assert root.resolve("sub/../inside.txt") == planted / "inside.txt"
    assert root.resolve("link-in.txt") == planted / "inside.txt"
    assert root.resolve(".") == root.resolve("sub/..") == planted
    assert root.resolve("not/yet/there.txt") == planted / "not" / "yet" / "there.txt"


def test_a_workspace_given_through_a_symlink_is_its_real_directory(planted, tmp_path):
    alias = tmp_path / "alias"
    alias.symlink_to(planted)
    assert Workspace(alias).resolve("inside.txt") == planted / "inside.txt"


def test_a_workspace_that_is_not_a_directory_is_refused_by_name(tmp_path):
    with pytest.raises(WorkspaceNotADirectoryError, match="missing is not a directory") as caught:
        Workspace(tmp_path / "missing")
    assert caught.value.hint


# -- random paths ------------------------------------------------------------------------------

SEGMENTS = st.sampled_from(["..", ".", "", "sub", "inside.txt", "link-out.txt", "dir-out", "evil",
                            "link-in.txt", "loop", "ws", "ws-evil", "~", "\x00", "a" * 300, "//"])
PATHS = st.one_of(st.lists(SEGMENTS, max_size=8).map("/".join),
                  st.text(alphabet=st.sampled_from("./\\~a\x00ws-é\n"), max_size=40),
                  st.text(max_size=30))


@pytest.fixture(scope="module")
def random_workspace(tmp_path_factory) -> Path:
    top = tmp_path_factory.mktemp("random")
    (top / "secret.txt").write_text("outside\n")
    (top / "ws-evil").mkdir()
    root = top / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "inside.txt").write_text("inside\n")
    (root / "link-out.txt").symlink_to(top / "secret.txt")
    (root / "dir-out").symlink_to(top)
    (root / "evil").symlink_to(top / "ws-evil")
    (root / "link-in.txt").symlink_to(root / "inside.txt")
    (root / "loop").symlink_to(root / "loop")
    return root


@settings(max_examples=400, deadline=None)
@given(path=PATHS)
def test_a_random_path_resolves_inside_or_is_refused(random_workspace, path):
    root = Workspace(random_workspace)
    try:
        resolved = root.resolve(path)
    except WorkspaceEscape:
        return
    assert resolved == random_workspace or resolved.is_relative_to(random_workspace)


@settings(max_examples=150, deadline=None)
@given(path=PATHS, tool=st.sampled_from(["read_file", "list_dir", "write_file", "edit_file", "grep",
                                          "run_command"]))
def test_a_random_path_given_to_a_tool_is_used_inside_or_refused_by_name(random_workspace, tools, path,
                                                                         tool):
    before = _outside(random_workspace)
    arguments = {"read_file": {"path": path}, "list_dir": {"path": path},
                 "write_file": {"path": path, "content": "x"},
                 "edit_file": {"path": path, "old": "side", "new": "SIDE"},
                 "grep": {"path": path, "pattern": "side"},
                 "run_command": {"cwd": path, "argv": ["true"]}}[tool]
    with contextlib.suppress(WorkspaceEscape, ToolArgumentError, ToolInputError):
        tools.get(tool).function(str(random_workspace), **tools.get(tool).arguments(arguments))
    assert _outside(random_workspace) == before


GLOBS = st.one_of(st.lists(st.sampled_from(["**", "*", "..", ".", "", "dir-out", "evil", "sub", "*.txt",
                                              "[", "?", "/", "\x00", "loop"]), max_size=6).map("/".join),
                  st.text(alphabet=st.sampled_from("*?[]!./\\a\x00-"), max_size=20))


@settings(max_examples=200, deadline=None)
@given(pattern=GLOBS, tool=st.sampled_from(["glob", "grep"]))
def test_a_random_glob_finds_only_workspace_paths_or_is_refused_by_name(random_workspace, tools, pattern,
                                                                         tool):
    arguments = {"pattern": pattern} if tool == "glob" else {"pattern": "o", "glob": pattern}
    try:
        found = tools.get(tool).function(str(random_workspace), **tools.get(tool).arguments(arguments))
    except (WorkspaceEscape, ToolArgumentError):
        return
    for line in found.split("\n"):
        if not line.startswith("["):
            shown = line.split(":")[0] if tool == "grep" else line.rstrip("/@")
            assert Workspace(random_workspace).contains(Path(os.path.abspath(random_workspace / shown)))
    assert "outside" not in found


def _outside(workspace: Path) -> dict[str, bytes]:
    """Every file next to the workspace (not in it), with its content."""
    top = workspace.parent
    return {str(path): path.read_bytes() for path in top.rglob("*")
            if path.is_file() and not path.is_symlink() and not path.is_relative_to(workspace)
            and os.path.realpath(path) == str(path)}


LONG = "a" * 300  # one path component past the filesystem's 255 bytes


@pytest.mark.parametrize(("tool", "arguments"), [
    ("read_file", {"path": LONG}), ("list_dir", {"path": LONG}), ("grep", {"pattern": "x", "path": LONG}),
    ("write_file", {"path": LONG, "content": "x"}), ("edit_file", {"path": LONG, "old": "x", "new": "y"}),
    ("run_command", {"argv": ["true"], "cwd": LONG}), ("glob", {"pattern": LONG + "/*"}),
])
def test_a_name_too_long_for_the_filesystem_is_a_tool_input_error(call, tool, arguments):
    with pytest.raises(ToolInputError, match="File name too long"):
        call(tool, **arguments)
