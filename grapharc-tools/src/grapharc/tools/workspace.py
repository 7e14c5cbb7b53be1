"""Workspace confinement, done by the tool itself rather than trusted to an executor.

Every path argument is resolved (symlinks followed) and must stay inside the
workspace; a sibling whose name merely starts with the workspace's path is
outside. ``../../etc/passwd`` and ``/etc/passwd`` both raise ``WorkspaceEscape``.
"""

from __future__ import annotations

from pathlib import Path

from grapharc.errors import GraphARCError


class WorkspaceEscape(GraphARCError, PermissionError):
    """A path argument that resolves outside the tool's workspace."""


class WorkspaceNotADirectoryError(GraphARCError, NotADirectoryError):
    """A workspace given to a tool that is not an existing directory."""

    hint = "create the directory first, or give the tool a workspace that exists"


class Workspace:
    """A directory that tools may touch, and nothing outside it."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            raise WorkspaceNotADirectoryError(f"workspace {self.root} is not a directory")

    def resolve(self, path: str | Path) -> Path:
        """The absolute path ``path`` names, refused if it leaves the workspace."""
        if not isinstance(path, str | Path) or str(path) == "" or "\x00" in str(path):
            raise WorkspaceEscape(f"path argument {path!r} is not a usable path")
        candidate = (self.root / Path(path)).resolve()
        if candidate != self.root and not candidate.is_relative_to(self.root):
            raise WorkspaceEscape(f"{path!r} resolves to {candidate}, outside the workspace "
                                  f"{self.root}")
        return candidate
