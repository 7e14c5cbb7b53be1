"""``write_file``: create or replace a text file in the workspace, atomically."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from grapharc.harness.tools import SideEffect, Tool
from grapharc.tools.textfiles import workspace_file, write_text
from grapharc.tools.workspace import MAX_PATH_CHARS

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
    with workspace_file(workspace, path, tool="write_file", create=True) as (folder, name, shown):
        existed = write_text(folder, name, content, tool="write_file", shown=path)
    return f"{'replaced' if existed else 'created'} {shown} ({len(content)} characters)"


def write_file_tool() -> Tool:
    """The ``write_file`` tool, as the grapharc-tools plugin registers it."""
    return Tool(
        name="write_file",
        description=("Create or replace a UTF-8 text file in the workspace with `content`, "
                     "creating missing parent directories. The write is atomic: the file holds the "
                     "old content or the new, never a mix."),
        args_model=WriteFileArgs, function=write_file, side_effect=SideEffect.WRITE, idempotent=True)
