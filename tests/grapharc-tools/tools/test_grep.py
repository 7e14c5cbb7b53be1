"""grep: Python regular expressions over workspace text files, within byte, match and time limits."""

from __future__ import annotations

import pytest

from grapharc.harness.tools import ToolArgumentError
from grapharc.tools import ToolInputError, WorkspaceEscape
from grapharc.tools.search import MAX_FILE_BYTES, MAX_LINE_CHARS, MAX_MATCHES


@pytest.fixture
def project(workspace):
    files = {"src/app.py": "import os\n\ndef main():\n    return os.getcwd()\n",
             "src/lib/util.py": "def helper():\n    return 'MAIN'\n",
             "docs/guide.md": "call main() to start\n",
             "notes.txt": "nothing here\r\nmain line with CRLF\r\n"}
    for name, text in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    return workspace


def test_matching_lines_come_as_path_line_text_in_path_order(project, call):
    assert call("grep", pattern=r"main\(").split("\n") == [
        "docs/guide.md:1: call main() to start", "src/app.py:3: def main():"]


def test_the_pattern_is_python_re_syntax_with_inline_flags(project, call):
    assert call("grep", pattern=r"(?i)\bmain\b", path="src").split("\n") == [
        "src/app.py:3: def main():", "src/lib/util.py:2:     return 'MAIN'"]


def test_a_carriage_return_is_not_part_of_the_shown_line(project, call):
    assert call("grep", pattern="CRLF$", path="notes.txt") == "notes.txt:2: main line with CRLF"


@pytest.mark.parametrize(("glob", "expected"), [
    ("*.py", ["src/app.py:3: def main():"]),
    ("lib/*.py", []),
    ("*.md", ["docs/guide.md:1: call main() to start"]),
])
def test_a_glob_without_a_slash_matches_file_names_and_with_one_the_path_below(project, call, glob, expected):
    assert call("grep", pattern="main", glob=glob).split("\n") == (expected or ["[grep: no matches]"])
    assert call("grep", pattern="helper", path="src", glob="lib/*.py") == "src/lib/util.py:1: def helper():"


@pytest.mark.parametrize("pattern", ["(", "[a-", "a{2,1}", "*a", "(?P<1x>a)"])
def test_an_invalid_regular_expression_is_refused_before_anything_is_read(project, call, tools, pattern):
    with pytest.raises(ToolArgumentError, match="is not a valid regular expression"):
        call("grep", pattern=pattern)
    with pytest.raises(ToolArgumentError, match="is not a valid regular expression"):
        tools.get("grep").function(str(project), pattern=pattern)


def test_a_backtracking_pattern_stops_at_the_time_limit_and_says_so(workspace, call, monkeypatch):
    monkeypatch.setattr("grapharc.tools.search.TIME_LIMIT", 0.2)
    (workspace / "a.txt").write_text("a" * 40 + "!\nmatch\n")  # (a|aa)+$ takes ~2**40 steps on line 1
    assert call("grep", pattern=r"^(a|aa)+$|match").split("\n") == [
        "[grep: no matches]",
        "[grep: stopped early because it reached the 0.2 s time limit; results are incomplete]"]


def test_binary_files_are_skipped_and_counted(project, call):
    (project / "blob.bin").write_bytes(b"main\x00main")
    assert call("grep", pattern="^main line").split("\n") == [
        "notes.txt:2: main line with CRLF", "[grep: skipped 1 binary file(s)]"]


def test_only_the_first_part_of_a_large_file_is_searched_and_the_reply_says_so(workspace, call):
    (workspace / "big.log").write_text("early\n" + "x" * MAX_FILE_BYTES + "\nlate\n")
    assert call("grep", pattern="early|late").split("\n") == [
        "big.log:1: early", f"[grep: searched only the first {MAX_FILE_BYTES} bytes of 1 large file(s)]"]


def test_reading_stops_at_the_total_byte_limit(workspace, call, monkeypatch):
    monkeypatch.setattr("grapharc.tools.search.MAX_TOTAL_BYTES", 100)
    for name in ("a.txt", "b.txt", "c.txt"):
        (workspace / name).write_text("hit\n" * 20)
    reply = call("grep", pattern="hit").split("\n")
    assert {line.split(":")[0] for line in reply[:-1]} == {"a.txt", "b.txt"}
    assert reply[-1] == "[grep: stopped early because it had read 100 bytes in all; results are incomplete]"


def test_matches_are_capped_and_the_reply_says_so(workspace, call):
    (workspace / "many.txt").write_text("hit\n" * (MAX_MATCHES + 50))
    reply = call("grep", pattern="hit").split("\n")
    assert len(reply) == MAX_MATCHES + 1 and reply[MAX_MATCHES - 1] == f"many.txt:{MAX_MATCHES}: hit"
    assert reply[-1] == (f"[grep: stopped early because it found more than {MAX_MATCHES} matching lines; "
                         "results are incomplete]")


def test_a_long_matching_line_is_shown_cut(workspace, call):
    (workspace / "wide.txt").write_text("needle" + "y" * 1000)
    assert call("grep", pattern="needle") == f"wide.txt:1: needle{'y' * (MAX_LINE_CHARS - 6)}…"


def test_grep_does_not_follow_symlinks_out(project, call):
    (project / "out").symlink_to(project.parent)
    (project / "secret-link.txt").symlink_to(project.parent / "secret.txt")
    assert call("grep", pattern="outside|sibling") == "[grep: no matches]"
    with pytest.raises(WorkspaceEscape):
        call("grep", pattern="outside", path="secret-link.txt")
    with pytest.raises(WorkspaceEscape):
        call("grep", pattern="outside", glob="../*")


def test_a_missing_path_is_named(project, call):
    with pytest.raises(ToolInputError, match="'nowhere' is not a file or directory"):
        call("grep", pattern="x", path="nowhere")


def test_hidden_directories_are_skipped_unless_path_or_glob_names_them(workspace, call):
    for name in ("app.py", ".venv/lib/site.py", ".git/config", "sub/.env"):
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(f"token in {name}\n")
    assert call("grep", pattern="token") == "app.py:1: token in app.py"
    assert call("grep", pattern="token", path=".venv") == ".venv/lib/site.py:1: token in .venv/lib/site.py"
    assert call("grep", pattern="token", glob=".env") == "sub/.env:1: token in sub/.env"


def test_a_walk_that_hits_its_entry_limit_says_so(workspace, call, monkeypatch):
    monkeypatch.setattr("grapharc.tools.walk.MAX_VISITED", 3)
    monkeypatch.setattr("grapharc.tools.search.MAX_VISITED", 3)
    for index in range(6):
        (workspace / f"f{index}.txt").write_text("hit\n")
    assert call("grep", pattern="hit").split("\n") == [
        "f0.txt:1: hit", "f1.txt:1: hit", "f2.txt:1: hit",
        "[grep: looked at the first 3 entries only; narrow `path` or `glob`]"]
