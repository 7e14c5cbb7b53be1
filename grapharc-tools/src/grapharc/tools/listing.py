"""``list_dir`` and ``glob``: what is in the workspace, sorted and capped.

Directories are shown with a trailing ``/`` and symlinks with a trailing ``@``; neither tool
follows a symlink, and ``glob`` leaves out a symlink that points outside the workspace. ``glob``
skips names starting with ``.`` unless the pattern spells the dot; ``list_dir`` shows everything.
A name's control characters are shown escaped (``grapharc.tools.names``), one line per entry.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, Field

from grapharc.harness.tools import SideEffect, Tool
from grapharc.tools.beneath import Beneath
from grapharc.tools.errors import ToolInputError, os_errors
from grapharc.tools.names import escaped_name
from grapharc.tools.walk import MAX_VISITED, GlobPattern, Walk
from grapharc.tools.workspace import MAX_PATH_CHARS, Workspace

MAX_ENTRIES = 1000
"""The most names list_dir or glob returns; a note says how many more there were."""


class ListDirArgs(BaseModel):
    """What list_dir takes."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(".", min_length=1, max_length=MAX_PATH_CHARS,
                      description="the directory to list, relative to the workspace root")


class GlobArgs(BaseModel):
    """What glob takes."""

    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(min_length=1, max_length=MAX_PATH_CHARS,
                         description="a glob relative to the workspace root: `*` and `?` match within "
                                     "one path segment, `**` matches any number of directories "
                                     "(e.g. `src/**/*.py`)")


def suffix(entry: os.DirEntry[str]) -> str:
    """``/`` for a directory, ``@`` for a symlink, nothing for anything else."""
    if entry.is_symlink():
        return "@"
    return "/" if entry.is_dir(follow_symlinks=False) else ""


def capped(names: list[str], tool: str) -> list[str]:
    """The first ``MAX_ENTRIES`` of ``names``, with a note when some were left out."""
    if len(names) <= MAX_ENTRIES:
        return names
    return [*names[:MAX_ENTRIES], f"[{tool}: {len(names) - MAX_ENTRIES} more not shown; "
                                  f"at most {MAX_ENTRIES} are listed]"]


def list_dir(workspace: str, path: str = ".") -> str:
    """The entries of a workspace directory, one per line, sorted by name."""
    root = Workspace(workspace)
    relative = root.relative(root.resolve(path))
    with os_errors("list_dir", path), Beneath(root.root) as held:
        try:
            folder = held.directory(relative)
        except (FileNotFoundError, NotADirectoryError):
            raise ToolInputError(f"list_dir: {path!r} is not a directory in the workspace") from None
        with folder:
            names = sorted(escaped_name(entry.name) + suffix(entry) for entry in folder.entries())
    if not names:
        return f"[list_dir: {escaped_name(relative)} is empty]"
    return "\n".join(capped(names, "list_dir"))


def glob(workspace: str, pattern: str) -> str:
    """The workspace paths matching ``pattern``, one per line, sorted."""
    root = Workspace(workspace)
    matcher = GlobPattern(pattern)
    start = root.resolve(PurePosixPath(*matcher.base)) if matcher.base else root.root
    found = []
    with os_errors("glob", pattern), Beneath(root.root) as held:
        walk = Walk(held, root.relative(start), hidden=matcher.wants_hidden)
        for seen in walk:
            parts = matcher.base + seen.parts
            if not matcher.matches(parts):
                continue
            pointee = Path(os.path.realpath(start.joinpath(*seen.parts)))
            if seen.entry.is_symlink() and not root.contains(pointee):
                continue
            found.append(escaped_name("/".join(parts)) + suffix(seen.entry))
    lines = capped(sorted(found), "glob") or [f"[glob: no path in the workspace matches {pattern!r}]"]
    if walk.truncated:
        lines.append(f"[glob: stopped after looking at {MAX_VISITED} entries, so matches may be missing; "
                     "narrow the pattern]")
    return "\n".join(lines)


def list_dir_tool() -> Tool:
    """The ``list_dir`` tool, as the grapharc-tools plugin registers it."""
    return Tool(
        name="list_dir",
        description=("List a directory in the workspace, one entry per line sorted by name: "
                     f"directories end in `/`, symlinks in `@`. At most {MAX_ENTRIES} entries."),
        args_model=ListDirArgs, function=list_dir, side_effect=SideEffect.READ, idempotent=True)


def glob_tool() -> Tool:
    """The ``glob`` tool, as the grapharc-tools plugin registers it."""
    return Tool(
        name="glob",
        description=("Find workspace paths matching a glob such as `**/*.py` or `src/*.txt` "
                     "(matched against the whole path from the workspace root). Returns sorted "
                     f"paths, directories ending in `/`; at most {MAX_ENTRIES}. Symlinks are not "
                     "followed; names starting with `.` are skipped unless the pattern spells the dot "
                     "(`**/.env`)."),
        args_model=GlobArgs, function=glob, side_effect=SideEffect.READ, idempotent=True)
