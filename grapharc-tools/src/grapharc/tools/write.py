"""``write_file``: create or replace a text file in the workspace, atomically."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from grapharc.harness.tools import SideEffect, Tool
from grapharc.tools.errors import ToolInputError, os_errors
from grapharc.tools.textfiles import write_text
from grapharc.tools.workspace import MAX_PATH_CHARS, Workspace

MAX_WRITE_CHARS = 1_000_000
"""The most characters one write_file or edit_file call takes."""


class WriteFileArgs(BaseModel):
    """What write_file takes."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1, max_length=MAX_PATH_CHARS,
                      description="the file to write, relative to the workspace root; missing parent "
                                  "directories are created")
    content: str = Field(max_length=MAX_WRITE_CHARS,
                         description="the whole new content of the file (UTF-8 text)")


def write_file(workspace: str, path: str, content: str) -> str:
    """Write ``content`` to ``path`` (temporary file + rename), creating parent directories."""
    root = Workspace(workspace)
    target = root.resolve(path)
    shown = root.relative(target)
    with os_errors("write_file", path):
        if target.is_dir():
            raise ToolInputError(f"write_file: {path!r} is a directory")
        existed = target.exists()
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text(target, content, tool="write_file")
    return f"{'replaced' if existed else 'created'} {shown} ({len(content)} characters)"


def write_file_tool() -> Tool:
    """The ``write_file`` tool, as the grapharc-tools plugin registers it."""
    return Tool(
        name="write_file",
        description=("Create or replace a UTF-8 text file in the workspace with `content`, "
                     "creating missing parent directories. The write is atomic: the file holds the "
                     "old content or the new, never a mix."),
        args_model=WriteFileArgs, function=write_file, side_effect=SideEffect.WRITE, idempotent=True)
