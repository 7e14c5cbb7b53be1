"""write_file: atomic replacement, parents created, never through a symlink that points out."""

from __future__ import annotations

import stat

import pytest

from grapharc.harness.tools import ToolArgumentError
from grapharc.tools import ToolInputError, WorkspaceEscape
from grapharc.tools.write import MAX_WRITE_CHARS


def test_a_new_file_is_created_with_its_parent_directories(workspace, call):
    assert call("write_file", path="notes/deep/a.txt", content="héllo\r\n") == \
        "created notes/deep/a.txt (7 characters)"
    assert (workspace / "notes" / "deep" / "a.txt").read_bytes() == "héllo\r\n".encode()
    assert stat.S_IMODE((workspace / "notes" / "deep" / "a.txt").stat().st_mode) == 0o644


def test_replacing_is_a_rename_so_an_old_hard_link_keeps_the_old_content(workspace, call):
    (workspace / "a.txt").write_text("old")
    (workspace / "a.txt").chmod(0o755)
    (workspace / "snapshot.txt").hardlink_to(workspace / "a.txt")
    assert call("write_file", path="a.txt", content="new") == "replaced a.txt (3 characters)"
    assert (workspace / "a.txt").read_text() == "new"
    assert (workspace / "snapshot.txt").read_text() == "old"  # a new inode replaced the name
    assert stat.S_IMODE((workspace / "a.txt").stat().st_mode) == 0o755
    assert sorted(p.name for p in workspace.iterdir()) == ["a.txt", "snapshot.txt"]  # no temp left


def test_text_that_is_not_utf8_encodable_changes_nothing(workspace, call, tools):
    (workspace / "a.txt").write_text("old")
    with pytest.raises(ToolArgumentError, match="content"):
        call("write_file", path="a.txt", content="lone surrogate \udc80")
    with pytest.raises(ToolInputError, match="cannot be written as UTF-8"):  # called directly
        tools.get("write_file").function(str(workspace), path="a.txt", content="lone \udc80")
    assert (workspace / "a.txt").read_text() == "old"
    assert [p.name for p in workspace.iterdir()] == ["a.txt"]


def test_writing_through_a_symlink_inside_changes_its_target(workspace, call):
    (workspace / "real.txt").write_text("old")
    (workspace / "alias.txt").symlink_to(workspace / "real.txt")
    call("write_file", path="alias.txt", content="new")
    assert (workspace / "real.txt").read_text() == "new"
    assert (workspace / "alias.txt").is_symlink()


@pytest.mark.parametrize("dangling", [False, True])
def test_writing_through_a_symlink_that_points_out_is_refused(workspace, call, dangling):
    target = workspace.parent / ("planted.txt" if dangling else "secret.txt")
    (workspace / "out.txt").symlink_to(target)
    with pytest.raises(WorkspaceEscape):
        call("write_file", path="out.txt", content="pwned")
    assert not target.exists() if dangling else target.read_text() == "outside the workspace\n"


def test_a_directory_cannot_be_overwritten(workspace, call):
    (workspace / "sub").mkdir()
    with pytest.raises(ToolInputError, match="'sub' is a directory"):
        call("write_file", path="sub", content="x")


def test_content_must_be_text_and_within_the_cap(call):
    with pytest.raises(ToolArgumentError, match="content"):
        call("write_file", path="a.txt", content=["not", "text"])
    with pytest.raises(ToolArgumentError, match="content"):
        call("write_file", path="a.txt", content="x" * (MAX_WRITE_CHARS + 1))


def test_a_name_that_takes_all_255_bytes_can_still_be_written(call, workspace):
    name = "é" * 127 + "a"  # 255 bytes in UTF-8: the temporary file beside it must not be longer
    assert call("write_file", path=name, content="x").startswith("created")
    assert (workspace / name).read_text() == "x"
