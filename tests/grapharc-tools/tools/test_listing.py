"""list_dir and glob: sorted, marked, confined and capped."""

from __future__ import annotations

import pytest

from grapharc.tools import ToolInputError, WorkspaceEscape
from grapharc.tools.listing import MAX_ENTRIES
from grapharc.tools.walk import GlobPattern


@pytest.fixture
def tree(workspace):
    for name in ("src/pkg/core.py", "src/pkg/util.py", "src/main.py", "README.md", "docs/a.md", ".hidden"):
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(name)
    (workspace / "inner").symlink_to(workspace / "src")
    (workspace / "out.py").symlink_to(workspace.parent / "secret.txt")
    (workspace / "outdir").symlink_to(workspace.parent)
    return workspace


def test_list_dir_shows_sorted_entries_with_directories_and_symlinks_marked(tree, call):
    assert call("list_dir").split("\n") == [".hidden", "README.md", "docs/", "inner@", "out.py@",
                                            "outdir@", "src/"]
    assert call("list_dir", path="src/pkg") == "core.py\nutil.py"


def test_list_dir_of_an_empty_directory_says_so(workspace, call):
    (workspace / "empty").mkdir()
    assert call("list_dir", path="empty") == "[list_dir: empty is empty]"


def test_list_dir_of_a_file_is_refused(tree, call):
    with pytest.raises(ToolInputError, match=r"'README\.md' is not a directory"):
        call("list_dir", path="README.md")


def test_list_dir_through_a_symlink_that_points_out_is_refused(tree, call):
    with pytest.raises(WorkspaceEscape):
        call("list_dir", path="outdir")


def test_a_long_listing_is_capped_and_says_how_many_were_left_out(workspace, call):
    for index in range(MAX_ENTRIES + 7):
        (workspace / f"f{index:05d}").touch()
    lines = call("list_dir").split("\n")
    assert len(lines) == MAX_ENTRIES + 1 and lines[0] == "f00000"
    assert lines[-1] == f"[list_dir: 7 more not shown; at most {MAX_ENTRIES} are listed]"


@pytest.mark.parametrize(("pattern", "expected"), [
    ("**/*.py", ["src/main.py", "src/pkg/core.py", "src/pkg/util.py"]),
    ("*.md", ["README.md"]),
    ("src/*", ["src/main.py", "src/pkg/"]),
    ("src/**", ["src/main.py", "src/pkg/", "src/pkg/core.py", "src/pkg/util.py"]),
    ("**/pkg/*.py", ["src/pkg/core.py", "src/pkg/util.py"]),
    ("inner/*.py", ["inner/main.py"]),
    ("d?cs/[a-c].md", ["docs/a.md"]),
])
def test_glob_finds_sorted_workspace_paths(tree, call, pattern, expected):
    assert call("glob", pattern=pattern).split("\n") == expected


def test_glob_does_not_follow_symlinks_and_leaves_out_those_that_point_out(tree, call):
    found = call("glob", pattern="*").split("\n")
    assert "inner@" in found and "out.py@" not in found and "outdir@" not in found
    assert "src/main.py" in call("glob", pattern="**/main.py") and "inner/main.py" not in \
        call("glob", pattern="**/main.py")


def test_glob_with_no_match_says_so(tree, call):
    assert call("glob", pattern="**/*.rs") == "[glob: no path in the workspace matches '**/*.rs']"


@pytest.mark.parametrize("pattern", ["../*", "/etc/*", "src/../../*", "outdir/*", "a\x00b"])
def test_glob_patterns_that_leave_the_workspace_are_refused(tree, call, pattern):
    with pytest.raises(WorkspaceEscape):
        call("glob", pattern=pattern)


def test_glob_results_are_capped(workspace, call):
    for index in range(MAX_ENTRIES + 3):
        (workspace / f"f{index:05d}.txt").touch()
    lines = call("glob", pattern="*.txt").split("\n")
    assert len(lines) == MAX_ENTRIES + 1 and lines[-1].startswith("[glob: 3 more not shown")


def test_a_walk_that_hits_its_entry_limit_says_results_may_be_missing(workspace, call, monkeypatch):
    monkeypatch.setattr("grapharc.tools.walk.MAX_VISITED", 5)
    monkeypatch.setattr("grapharc.tools.listing.MAX_VISITED", 5)
    for index in range(10):
        (workspace / f"f{index}.txt").touch()
    assert call("glob", pattern="*.txt").split("\n")[-1].startswith(
        "[glob: stopped after looking at 5 entries")


@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("**", (), True), ("**/a", ("a",), True), ("**/a", ("x", "y", "a"), True), ("a/**/b", ("a", "b"), True),
    ("*", ("a", "b"), False), ("a/*/c", ("a", "c"), False), ("**/*.py", ("x.pyc",), False),
])
def test_glob_segments_match_one_at_a_time_and_globstar_any_number(pattern, path, matches):
    assert GlobPattern(pattern).matches(path) is matches


@pytest.fixture
def project(workspace):
    for name in ("app.py", ".venv/lib/site.py", ".git/config", "sub/.env", ".github/workflows/ci.yml"):
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(name)
    return workspace


@pytest.mark.parametrize(("pattern", "expected"), [
    ("**/*.py", ["app.py"]),
    ("**", ["app.py", "sub/"]),
    (".venv/**/*.py", [".venv/lib/site.py"]),
    ("**/.env", ["sub/.env"]),
    (".github/*/*.yml", [".github/workflows/ci.yml"]),
])
def test_glob_skips_hidden_names_unless_the_pattern_spells_the_dot(project, call, pattern, expected):
    assert call("glob", pattern=pattern).split("\n") == expected


def test_list_dir_shows_hidden_names(project, call):
    assert call("list_dir").split("\n") == [".git/", ".github/", ".venv/", "app.py", "sub/"]


def test_a_name_with_a_newline_or_control_characters_is_shown_escaped_on_one_line(workspace, call):
    (workspace / "a\n").mkdir()
    (workspace / "a\n" / "-").write_text("hello\n")
    (workspace / "tab\tx.txt").write_text("hello\n")
    (workspace / "back\\slash\x1b").write_text("hello\n")
    escaped = ["a\\n/", "a\\n/-", "back\\\\slash\\x1b", "tab\\tx.txt"]
    assert call("list_dir").split("\n") == [escaped[0], *escaped[2:]]
    assert call("glob", pattern="**/*").split("\n") == escaped
    found = sorted(call("grep", pattern="hello").split("\n"))
    assert found == [f"{name}:1: hello" for name in escaped[1:]]
    (workspace / "a\n" / "-").unlink()
    assert call("list_dir", path="a\n") == "[list_dir: a\\n is empty]"
