"""edit_file: one exact, unique match is replaced; anything else is refused and changes nothing."""

from __future__ import annotations

import pytest

from grapharc.tools import ToolInputError, WorkspaceEscape

SOURCE = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"


@pytest.fixture
def source(workspace):
    (workspace / "calc.py").write_text(SOURCE)
    return workspace / "calc.py"


def test_a_unique_match_is_replaced_and_the_reply_names_the_line(source, call):
    assert call("edit_file", path="calc.py", old="def add(a, b):\n    return a - b",
                new="def add(a, b):\n    return a + b") == \
        "edited calc.py: replaced 31 characters at line 1 with 31"
    assert source.read_text() == SOURCE.replace("return a - b", "return a + b", 1)


def test_text_that_does_not_occur_is_refused_and_the_file_is_unchanged(source, call):
    with pytest.raises(ToolInputError, match=r"does not occur in 'calc\.py'; copy it exactly"):
        call("edit_file", path="calc.py", old="return a * b", new="x")
    assert source.read_text() == SOURCE


def test_text_that_occurs_several_times_is_refused_with_the_count(source, call):
    with pytest.raises(ToolInputError, match=r"occurs 2 times in 'calc\.py'; it must occur exactly once"):
        call("edit_file", path="calc.py", old="return a - b", new="return a + b")
    assert source.read_text() == SOURCE


def test_overlapping_occurrences_count_as_several(workspace, call):
    (workspace / "a.txt").write_text("aaa")
    with pytest.raises(ToolInputError, match="occurs 2 times"):
        call("edit_file", path="a.txt", old="aa", new="b")


def test_counting_occurrences_stays_linear_on_repetitive_text(workspace, call):
    (workspace / "a.txt").write_text("a" * 400_000)  # one by one, overlapping: ~10**11 comparisons
    with pytest.raises(ToolInputError, match="occurs 2 times"):
        call("edit_file", path="a.txt", old="a" * 200_000, new="b")


def test_the_match_is_exact_including_whitespace(source, call):
    with pytest.raises(ToolInputError, match="does not occur"):
        call("edit_file", path="calc.py", old="def add(a,b):", new="x")


def test_a_binary_file_is_not_edited(workspace, call):
    (workspace / "blob.bin").write_bytes(b"abc\x00def")
    with pytest.raises(ToolInputError, match="binary"):
        call("edit_file", path="blob.bin", old="abc", new="x")
    assert (workspace / "blob.bin").read_bytes() == b"abc\x00def"


def test_an_edit_through_a_symlink_that_points_out_is_refused(workspace, call):
    (workspace / "out.txt").symlink_to(workspace.parent / "secret.txt")
    with pytest.raises(WorkspaceEscape):
        call("edit_file", path="out.txt", old="outside", new="pwned")
    assert (workspace.parent / "secret.txt").read_text() == "outside the workspace\n"
