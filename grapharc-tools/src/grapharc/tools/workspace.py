"""Workspace confinement, done by the tool itself rather than trusted to an executor.

A path argument is relative to the workspace root. It is resolved with every symlink followed
(a symlinked parent directory too) and must land inside the root: ``../`` that climbs out, any
absolute path, a symlink pointing out and a sibling whose name merely starts with the root's
(``/tmp/ws-evil`` next to ``/tmp/ws``) all raise ``WorkspaceEscape``, as does a NUL byte.
Containment is compared path component by component, never as a string prefix. What a tool
then opens is the resolved path beneath the workspace's own descriptor, with no symlink allowed
on the way (``grapharc.tools.beneath``), so a folder swapped for a symlink out after this check
is refused rather than followed.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath

from grapharc.errors import GraphARCError
from grapharc.tools.errors import ToolInputError

MAX_PATH_CHARS = 4096
"""The longest path argument a tool's args model accepts (Linux's PATH_MAX)."""


class WorkspaceEscape(GraphARCError, PermissionError):
    """A path argument that is absolute, contains a NUL byte, or resolves outside the workspace."""

    hint = "name a path relative to the workspace root that stays inside it"


class WorkspaceNotADirectoryError(GraphARCError, NotADirectoryError):
    """A workspace given to a tool that is not an existing directory."""

    hint = "create the directory first, or give the tool a workspace that exists"


class Workspace:
    """A directory that tools may touch, and nothing outside it."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.realpath(Path(root).expanduser()))
        if not os.path.isdir(self.root):  # False, not an OSError, for a name the system cannot take
            raise WorkspaceNotADirectoryError(f"workspace {self.root} is not a directory")

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """The real path ``path`` names inside the workspace; refused if it leaves it."""
        if not isinstance(path, str | PurePath):
            raise WorkspaceEscape(f"a path argument must be text, got {type(path).__name__}")
        text = os.fspath(path)
        if "\x00" in text:
            raise WorkspaceEscape(f"path {text!r} contains a NUL byte")
        if PurePath(text).is_absolute():
            raise WorkspaceEscape(f"path {text!r} is absolute; paths are relative to the workspace root")
        try:
            candidate = Path(os.path.realpath(self.root / text))
        except OSError as exc:  # a symlink on the way was swapped for something else mid-resolution
            raise ToolInputError(f"path {text!r} cannot be resolved ({exc.strerror}); it changed while "
                                 "it was being resolved", hint="call the tool again") from None
        if not self.contains(candidate):
            raise WorkspaceEscape(f"path {text!r} resolves to {candidate}, outside the workspace {self.root}")
        return candidate

    def contains(self, real: Path) -> bool:
        """Whether the already-resolved path ``real`` is the root or lies under it."""
        return real == self.root or real.is_relative_to(self.root)

    def relative(self, real: Path) -> str:
        """``real`` as the workspace-relative path a model would name it by (``.`` for the root)."""
        return real.relative_to(self.root).as_posix() or "."
