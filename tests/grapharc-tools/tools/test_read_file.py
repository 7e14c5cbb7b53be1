"""read_file: a window of characters, a note when the file goes on, binary and huge files refused."""

from __future__ import annotations

import os

import pytest

from grapharc.harness.tools import ToolArgumentError
from grapharc.tools import ToolInputError
from grapharc.tools.read import DEFAULT_LIMIT, MAX_LIMIT
from grapharc.tools.textfiles import MAX_TEXT_BYTES


def test_a_small_file_is_returned_whole_and_exactly(workspace, call):
    (workspace / "a.txt").write_bytes("héllo\r\nworld\n".encode())
    assert call("read_file", path="a.txt") == "héllo\r\nworld\n"


def test_offset_and_limit_count_characters_and_the_reply_says_where_to_go_on(workspace, call):
    (workspace / "a.txt").write_text("0123456789é" * 3)
    window = call("read_file", path="a.txt", offset=5, limit=8)
    text, note = window.split("\n", 1)
    assert text == "56789é01"
    assert note == "[read_file: showed characters 5 to 13 of 33; call read_file with offset=13 to read on]"


def test_the_last_window_has_no_note(workspace, call):
    (workspace / "a.txt").write_text("abcdef")
    assert call("read_file", path="a.txt", offset=4, limit=10) == "ef"


def test_the_default_window_is_capped_and_says_so(workspace, call):
    (workspace / "big.txt").write_text("x" * (DEFAULT_LIMIT + 5))
    assert call("read_file", path="big.txt").endswith(
        f"showed characters 0 to {DEFAULT_LIMIT} of {DEFAULT_LIMIT + 5}; "
        f"call read_file with offset={DEFAULT_LIMIT} to read on]")


def test_an_offset_past_the_end_says_how_long_the_file_is(workspace, call):
    (workspace / "a.txt").write_text("abc")
    assert call("read_file", path="a.txt", offset=10) == \
        "[read_file: offset 10 is past the end of 'a.txt', which has 3 characters]"


def test_an_empty_file_reads_as_nothing(workspace, call):
    (workspace / "empty.txt").write_text("")
    assert call("read_file", path="empty.txt") == ""


@pytest.mark.parametrize("arguments", [{"limit": MAX_LIMIT + 1}, {"limit": 0}, {"offset": -1}])
def test_windows_outside_the_schema_are_refused_before_reading(workspace, call, arguments):
    (workspace / "a.txt").write_text("abc")
    with pytest.raises(ToolArgumentError):
        call("read_file", path="a.txt", **arguments)


def test_a_file_with_nul_bytes_is_refused_as_binary(workspace, call):
    (workspace / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ToolInputError, match=r"'image\.png' is a binary file"):
        call("read_file", path="image.png")


def test_a_file_that_is_not_utf8_is_refused_with_the_offending_offset(workspace, call):
    (workspace / "latin1.txt").write_bytes("abc café".encode("latin-1"))
    with pytest.raises(ToolInputError, match=r"not UTF-8 text \(undecodable byte at offset 7\)"):
        call("read_file", path="latin1.txt")


def test_a_file_over_the_size_cap_is_refused_with_its_size(workspace, call):
    with open(workspace / "huge.log", "wb") as handle:  # sparse: costs no disk
        handle.truncate(MAX_TEXT_BYTES + 1)
    with pytest.raises(ToolInputError, match=f"is {MAX_TEXT_BYTES + 1} bytes, larger than") as caught:
        call("read_file", path="huge.log")
    assert "grep" in caught.value.hint


@pytest.mark.parametrize(("make", "message"), [
    (lambda ws: (ws / "sub").mkdir(), "'sub' is a directory"),
    (lambda ws: None, "'sub' does not exist"),
    (lambda ws: os.mkfifo(ws / "sub"), "'sub' is not a regular file"),
])
def test_a_directory_or_a_missing_file_is_named(workspace, call, make, message):
    make(workspace)
    with pytest.raises(ToolInputError, match=message):
        call("read_file", path="sub")


def test_an_unreadable_file_is_a_tool_input_error_not_a_traceback(workspace, call):
    if os.geteuid() == 0:
        pytest.skip("root reads files whatever their mode")
    secret = workspace / "locked.txt"
    secret.write_text("x")
    secret.chmod(0)
    with pytest.raises(ToolInputError, match=r"'locked\.txt': Permission denied"):
        call("read_file", path="locked.txt")
