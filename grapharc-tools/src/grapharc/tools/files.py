"""File tools confined to a workspace: read_file, write_file and list_dir.

Each ``*_tool(workspace)`` is the factory ``hooks`` registers, with the signature the
``ToolInfo`` contract names: called with one workspace directory, it returns the tool.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from grapharc.errors import GraphARCError
from grapharc.tools.workspace import Workspace

MAX_READ_BYTES = 1_000_000


class ToolInputError(GraphARCError, ValueError):
    """A tool argument that names something the tool cannot act on."""


def read_file_tool(workspace: str | Path) -> Callable[..., str]:
    """``read_file(path)``: a UTF-8 text file inside the workspace (at most 1 MB)."""
    root = Workspace(workspace)

    def read_file(path: str) -> str:
        target = root.resolve(path)
        if not target.is_file():
            raise ToolInputError(f"read_file: {path!r} is not a file in the workspace")
        if target.stat().st_size > MAX_READ_BYTES:
            raise ToolInputError(f"read_file: {path!r} is larger than {MAX_READ_BYTES} bytes")
        try:
            return target.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ToolInputError(f"read_file: {path!r} is not UTF-8 text") from exc

    return read_file


def write_file_tool(workspace: str | Path) -> Callable[..., str]:
    """``write_file(path, content)``: create or replace a text file inside the workspace."""
    root = Workspace(workspace)

    def write_file(path: str, content: str) -> str:
        if not isinstance(content, str):
            raise ToolInputError(f"write_file: content must be text, got {type(content).__name__}")
        target = root.resolve(path)
        if target.is_dir():
            raise ToolInputError(f"write_file: {path!r} is a directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return f"wrote {len(content)} characters to {target.relative_to(root.root)}"

    return write_file


def list_dir_tool(workspace: str | Path) -> Callable[..., list[str]]:
    """``list_dir(path=".")``: the entries of a directory inside the workspace, sorted."""
    root = Workspace(workspace)

    def list_dir(path: str = ".") -> list[str]:
        target = root.resolve(path)
        if not target.is_dir():
            raise ToolInputError(f"list_dir: {path!r} is not a directory in the workspace")
        return sorted(entry.name + ("/" if entry.is_dir() else "") for entry in target.iterdir())

    return list_dir
