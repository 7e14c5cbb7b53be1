"""Walking the workspace for list_dir, glob and grep: sorted, symlinks not followed, capped.

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
from pathlib import Path, PurePosixPath

from grapharc.errors import GraphARCError

MAX_VISITED = 100_000
"""The most directory entries one walk looks at before it stops (and says so)."""


@dataclass
class Walk:
    """The entries under ``start``, depth first in name order, never through a symlink.

    ``truncated`` is set when the walk stopped at ``limit`` entries (``MAX_VISITED`` if None).
    """

    start: Path
    limit: int | None = None
    truncated: bool = field(default=False, init=False)

    def __iter__(self) -> Iterator[os.DirEntry[str]]:
        limit = MAX_VISITED if self.limit is None else self.limit
        visited = 0
        stack = [str(self.start)]
        while stack:
            try:
                with os.scandir(stack.pop()) as listing:
                    entries = sorted(listing, key=lambda entry: entry.name)
            except GraphARCError:  # an executor's refusal is not an unreadable directory
                raise
            except OSError:  # unreadable or vanished: nothing to list there
                continue
            below = []
            for entry in entries:
                visited += 1
                if visited > limit:
                    self.truncated = True
                    return
                yield entry
                if entry.is_dir(follow_symlinks=False):
                    below.append(entry.path)
            stack.extend(reversed(below))


class GlobPattern:
    """A relative glob pattern (``src/**/*.py``) matched against workspace-relative paths."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.segments = tuple(part for part in PurePosixPath(pattern).parts if part != ".")

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
