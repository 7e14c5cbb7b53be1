"""``read_file``: a window of a UTF-8 text file in the workspace, counted in characters.

Characters rather than lines, because large tool output is stored under ``.grapharc/`` and
the model is told to read the rest by character offset; a one-line JSON document pages the
same way as source code. A window that stops before the end of the file says so and names the
offset to continue from.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from grapharc.harness.tools import SideEffect, Tool
from grapharc.tools.textfiles import MAX_TEXT_BYTES, read_text, workspace_file
from grapharc.tools.workspace import MAX_PATH_CHARS

DEFAULT_LIMIT = 8000
"""Characters returned when no limit is given (the harness's default for output shown whole)."""

MAX_LIMIT = 100_000
"""The most characters one call returns."""


class ReadFileArgs(BaseModel):
    """What read_file takes."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1, max_length=MAX_PATH_CHARS,
                      description="the file to read, relative to the workspace root")
    offset: int = Field(0, ge=0, description="the first character to return, counted from 0")
    limit: int = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT,
                       description=f"how many characters to return at most (1 to {MAX_LIMIT})")


def read_file(workspace: str, path: str, offset: int = 0, limit: int = DEFAULT_LIMIT) -> str:
    """Characters ``offset`` to ``offset + limit`` of the file, with a note when more follows."""
    with workspace_file(workspace, path, tool="read_file") as (folder, name, _):
        text = read_text(folder, name, tool="read_file", shown=path)
    end = min(offset + limit, len(text))
    if offset >= len(text) and text:
        return f"[read_file: offset {offset} is past the end of {path!r}, which has {len(text)} characters]"
    window = text[offset:end]
    if end < len(text):
        window += (f"\n[read_file: showed characters {offset} to {end} of {len(text)}; "
                   f"call read_file with offset={end} to read on]")
    return window


def read_file_tool() -> Tool:
    """The ``read_file`` tool, as the grapharc-tools plugin registers it."""
    return Tool(
        name="read_file",
        description=("Read a UTF-8 text file in the workspace. Returns at most `limit` characters "
                     "starting at character `offset`; when the file goes on, the reply ends with a "
                     "note giving the offset to continue from. Binary files and files over "
                     f"{MAX_TEXT_BYTES // (1024 * 1024)} MiB are refused."),
        args_model=ReadFileArgs, function=read_file, side_effect=SideEffect.READ, idempotent=True)
