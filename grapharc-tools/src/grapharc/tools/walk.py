"""Walking the workspace for glob and grep: sorted, symlinks not followed, hidden names skipped, capped.

Names starting with ``.`` (``.git``, ``.venv``, caches) are skipped unless asked for, as a shell's
``*`` skips them: a search of a real project would otherwise spend its limits inside them.

Glob patterns are matched one path segment at a time with ``fnmatch`` (``*``, ``?``,
``[...]``; ``*`` never crosses a ``/``), and a ``**`` segment matches any number of directories,
none included. The standard library has no ``**`` matcher for relative paths before
Python 3.13 (``glob.translate``), and ``glob.glob`` follows symlinked directories, which could
lead a walk out of the workspace; so the matcher is the few lines below.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

from grapharc.errors import GraphARCError
from grapharc.tools.beneath import Beneath, Directory
from grapharc.tools.workspace import WorkspaceEscape

MAX_VISITED = 100_000
"""The most directory entries one walk looks at before it stops (and says so)."""


@dataclass(frozen=True)
class Found:
    """One entry a walk met: its path below the walk's start, the entry, and its folder (held open)."""

    parts: tuple[str, ...]
    entry: os.DirEntry[str]
    folder: Directory


@dataclass
class Walk:
    """The entries under the workspace folder ``start``, depth first in name order, never through
    a symlink.

    Every folder is opened from the workspace root with no symlink on the way
    (``grapharc.tools.beneath``), so one swapped for a symlink since it was listed is skipped,
    not followed. ``truncated`` is set when the walk stopped after ``MAX_VISITED`` entries.
    Entries whose name starts with ``.`` are left out, and not entered, unless ``hidden``.
    """

    held: Beneath
    start: str
    hidden: bool = False
    truncated: bool = field(default=False, init=False)

    def __iter__(self) -> Iterator[Found]:
        visited = 0
        stack: list[tuple[str, ...]] = [()]
        while stack:
            parts = stack.pop()
            folder = self._folder(parts)
            if folder is None:
                continue
            with folder:
                try:
                    entries = folder.entries()
                except GraphARCError:
                    raise
                except OSError:
                    continue
                below = []
                for entry in entries:
                    if not self.hidden and entry.name.startswith("."):
                        continue
                    visited += 1
                    if visited > MAX_VISITED:
                        self.truncated = True
                        return
                    yield Found((*parts, entry.name), entry, folder)
                    if entry.is_dir(follow_symlinks=False):
                        below.append((*parts, entry.name))
            stack.extend(reversed(below))

    def _folder(self, parts: tuple[str, ...]) -> Directory | None:
        """The folder ``parts`` below the start, held open, or None when there is nothing to list:
        a missing start, or a folder below it that vanished, cannot be read, or was swapped for a
        symlink since it was listed (not followed). The start's other failures are the caller's."""
        try:
            return self.held.directory("/".join((self.start, *parts)))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except WorkspaceEscape:
            if parts:
                return None
            raise
        except GraphARCError:  # an executor's refusal is not an unreadable directory
            raise
        except OSError:
            if parts:
                return None
            raise


class GlobPattern:
    """A relative glob pattern (``src/**/*.py``) matched against workspace-relative paths.

    A pattern that could reach outside (absolute, with a ``..`` segment, or a NUL byte) raises
    WorkspaceEscape.
    """

    def __init__(self, pattern: str) -> None:
        parts = PurePosixPath(pattern).parts
        if "\x00" in pattern or PurePosixPath(pattern).is_absolute() or ".." in parts:
            raise WorkspaceEscape(f"glob pattern {pattern!r} must be relative to the workspace root, "
                                  "without '..' or NUL bytes")
        self.pattern = pattern
        self.segments = tuple(part for part in parts if part != ".")

    @property
    def wants_hidden(self) -> bool:
        """Whether a segment of the pattern spells out a leading ``.`` (``**/.env``, ``.github/*``)."""
        return any(part.startswith(".") for part in self.segments)

    @property
    def base(self) -> tuple[str, ...]:
        """The leading segments without wildcards: the only directory a walk need start from."""
        literal = []
        for part in self.segments[:-1]:
            if any(char in part for char in "*?["):
                break
            literal.append(part)
        return tuple(literal)

    def matches(self, parts: tuple[str, ...]) -> bool:
        """Whether the path whose segments are ``parts`` matches the pattern."""
        states = self._closure({0})
        for part in parts:
            following = set()
            for index in states:
                if index == len(self.segments):
                    continue
                if self.segments[index] == "**":
                    following.add(index)
                elif fnmatchcase(part, self.segments[index]):
                    following.add(index + 1)
            if not following:
                return False
            states = self._closure(following)
        return len(self.segments) in states

    def _closure(self, states: set[int]) -> set[int]:
        """``states`` plus every state reached by letting a ``**`` match no segment."""
        reached = set(states)
        for index in sorted(states):
            while index < len(self.segments) and self.segments[index] == "**":
                index += 1
                reached.add(index)
        return reached
