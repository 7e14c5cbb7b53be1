"""``grep``: lines of workspace text files matching a regular expression, within fixed limits.

Patterns have Python's ``re`` syntax and are matched by the ``regex`` package, which reads the
same syntax (its default VERSION0 mode) and can stop a single match after a timeout: CPython's
``re`` cannot be interrupted off the main thread, so one catastrophically backtracking pattern
such as ``(a|aa)+$`` could otherwise hold a worker for hours. Every match gets the time left of
the whole call's ``TIME_LIMIT``. Reading is capped per file and in total, matches are capped,
binary files are skipped, and the reply ends with a note for every limit that was reached.
"""

from __future__ import annotations

import os
import stat
import time

import regex
from pydantic import BaseModel, ConfigDict, Field, field_validator

from grapharc.errors import GraphARCError
from grapharc.harness.tools import SideEffect, Tool, ToolArgumentError
from grapharc.tools.beneath import Beneath, Directory
from grapharc.tools.errors import ToolInputError, os_errors
from grapharc.tools.names import escaped_name
from grapharc.tools.textfiles import looks_binary
from grapharc.tools.walk import MAX_VISITED, GlobPattern, Walk
from grapharc.tools.workspace import MAX_PATH_CHARS, Workspace

MAX_PATTERN_CHARS = 1000
MAX_FILE_BYTES = 1024 * 1024
"""Only this much of each file is searched."""
MAX_TOTAL_BYTES = 32 * 1024 * 1024
"""The search stops once it has read this much."""
MAX_MATCHES = 200
MAX_LINE_CHARS = 300
"""A matching line longer than this is shown cut."""
TIME_LIMIT = 10.0
"""Seconds one grep call may take, regular-expression matching included."""


def regex_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a regular expression grep can use, or None if it is one."""
    try:
        regex.compile(pattern)
    except (regex.error, ValueError, TypeError, OverflowError, RecursionError) as exc:
        return (f"{pattern!r} is not a valid regular expression ({exc}); use Python `re` syntax and "
                "escape special characters with a backslash")
    return None


def compiled(pattern: str) -> regex.Pattern[str]:
    """``pattern`` compiled, or a ToolArgumentError saying why it is not a regular expression."""
    problem = regex_problem(pattern)
    if problem is not None:
        raise ToolArgumentError(f"tool 'grep': pattern: {problem}")
    return regex.compile(pattern)


class GrepArgs(BaseModel):
    """What grep takes."""

    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(min_length=1, max_length=MAX_PATTERN_CHARS,
                         description="a regular expression in Python `re` syntax, searched for in each "
                                     "line (use (?i) for case-insensitive)")
    path: str = Field(".", min_length=1, max_length=MAX_PATH_CHARS,
                      description="the file or directory to search, relative to the workspace root")
    glob: str | None = Field(None, min_length=1, max_length=MAX_PATH_CHARS,
                             description="only search files matching this glob; a glob without `/` is "
                                         "matched against the file name (`*.py`), one with `/` against "
                                         "the path below `path`")

    @field_validator("pattern")
    @classmethod
    def _a_regular_expression(cls, pattern: str) -> str:
        problem = regex_problem(pattern)
        if problem is not None:
            raise ValueError(problem)
        return pattern


class _Search:
    """One grep call's running totals against its limits."""

    def __init__(self, expression: regex.Pattern[str]) -> None:
        self.expression = expression
        self.deadline = time.monotonic() + TIME_LIMIT
        self.lines: list[str] = []
        self.bytes_read = 0
        self.binary = 0
        self.cut_files = 0
        self.stopped = ""

    def file(self, folder: Directory, name: str, shown: str) -> None:
        """Search the file ``name`` of ``folder`` (not followed if it is a symlink by now)."""
        with os.fdopen(folder.open(name, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # swapped since it was looked at
                return
            data = handle.read(min(MAX_FILE_BYTES, MAX_TOTAL_BYTES - self.bytes_read) + 1)
        if looks_binary(data):
            self.binary += 1
            return
        if len(data) > MAX_FILE_BYTES:
            self.cut_files += 1
            data = data[:MAX_FILE_BYTES]
        self.bytes_read += len(data)
        for number, raw in enumerate(data.decode("utf-8", errors="replace").split("\n"), start=1):
            line = raw.removesuffix("\r")
            try:
                remaining = self.deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                found = self.expression.search(line, timeout=remaining)
            except TimeoutError:
                self.stopped = f"it reached the {TIME_LIMIT:g} s time limit"
                return
            if found is None:
                continue
            if len(self.lines) == MAX_MATCHES:
                self.stopped = f"it found more than {MAX_MATCHES} matching lines"
                return
            cut = line[:MAX_LINE_CHARS] + ("…" if len(line) > MAX_LINE_CHARS else "")
            self.lines.append(f"{shown}:{number}: {cut}")
        if self.bytes_read >= MAX_TOTAL_BYTES:
            self.stopped = f"it had read {MAX_TOTAL_BYTES} bytes in all"

    def report(self, walk: Walk | None) -> str:
        """The matching lines, then a note for each limit reached."""
        lines = self.lines or ["[grep: no matches]"]
        if self.stopped:
            lines.append(f"[grep: stopped early because {self.stopped}; results are incomplete]")
        if walk is not None and walk.truncated:
            lines.append(f"[grep: looked at the first {MAX_VISITED} entries only; narrow `path` or `glob`]")
        if self.cut_files:
            lines.append(f"[grep: searched only the first {MAX_FILE_BYTES} bytes of {self.cut_files} "
                         "large file(s)]")
        if self.binary:
            lines.append(f"[grep: skipped {self.binary} binary file(s)]")
        return "\n".join(lines)


def grep(workspace: str, pattern: str, path: str = ".", glob: str | None = None) -> str:
    """Lines matching ``pattern`` as ``path:line: text``, in path order, with notes on limits."""
    root = Workspace(workspace)
    search = _Search(compiled(pattern))
    relative = root.relative(root.resolve(path))
    parent, _, name = relative.rpartition("/")
    with os_errors("grep", path), Beneath(root.root) as held:
        with held.directory(parent or ".") as folder:
            try:
                kind = folder.lstat(name).st_mode
            except FileNotFoundError:
                kind = 0
            if stat.S_ISREG(kind):
                search.file(folder, name, escaped_name(relative))
                return search.report(None)
        if not stat.S_ISDIR(kind):
            raise ToolInputError(f"grep: {path!r} is not a file or directory in the workspace")
        selected = None if glob is None else GlobPattern(glob)
        walk = Walk(held, relative, hidden=selected is not None and selected.wants_hidden)
        for seen in walk:
            if search.stopped:
                break
            if not seen.entry.is_file(follow_symlinks=False):
                continue
            if selected is None or selected.matches(_matched_parts(selected, seen.parts)):
                try:
                    search.file(seen.folder, seen.entry.name, escaped_name(_joined(relative, seen.parts)))
                except GraphARCError:  # an executor's refusal is not an unreadable file
                    raise
                except OSError:  # unreadable or vanished since the walk saw it
                    continue
        return search.report(walk)


def _matched_parts(selected: GlobPattern, parts: tuple[str, ...]) -> tuple[str, ...]:
    """What a grep glob is matched against: the file name, or the path below the searched folder
    if the glob has a ``/``."""
    return parts if "/" in selected.pattern else parts[-1:]


def _joined(relative: str, parts: tuple[str, ...]) -> str:
    """The workspace path of ``parts`` below the folder ``relative`` (``.`` for the root)."""
    return "/".join(parts) if relative == "." else "/".join((relative, *parts))


def grep_tool() -> Tool:
    """The ``grep`` tool, as the grapharc-tools plugin registers it."""
    return Tool(
        name="grep",
        description=("Search workspace text files for lines matching a Python regular expression; "
                     "returns `path:line: text` lines in path order. Limits: "
                     f"{MAX_MATCHES} matching lines, the first {MAX_FILE_BYTES // (1024 * 1024)} MiB of each "
                     f"file, {MAX_TOTAL_BYTES // (1024 * 1024)} MiB in all, {TIME_LIMIT:g} s; binary "
                     "files, and names starting with `.` (unless `path` or `glob` names them), are "
                     "skipped; the reply says when a limit was reached."),
        args_model=GrepArgs, function=grep, side_effect=SideEffect.READ, idempotent=True)
