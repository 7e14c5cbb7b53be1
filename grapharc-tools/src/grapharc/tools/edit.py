"""``edit_file``: replace one exact, unique piece of text in a workspace file."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from grapharc.harness.tools import SideEffect, Tool
from grapharc.tools.errors import ToolInputError
from grapharc.tools.textfiles import read_text, workspace_file, write_text
from grapharc.tools.workspace import MAX_PATH_CHARS
from grapharc.tools.write import MAX_WRITE_CHARS


class EditFileArgs(BaseModel):
    """What edit_file takes."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1, max_length=MAX_PATH_CHARS,
                      description="the file to edit, relative to the workspace root")
    old: str = Field(min_length=1, max_length=MAX_WRITE_CHARS,
                     description="the exact text to replace; it must occur exactly once in the file "
                                 "(include surrounding lines to make it unique)")
    new: str = Field(max_length=MAX_WRITE_CHARS, description="the text to put in its place")


def occurrences(text: str, old: str) -> int:
    """0, 1, or how many times ``old`` occurs in ``text`` (at least 2 when two occurrences overlap).

    Two ``find`` calls and one ``count``, each linear: counting every overlapping occurrence one
    by one could take quadratic time on text like ``"a" * 10**6``.
    """
    first = text.find(old)
    if first == -1:
        return 0
    if text.find(old, first + 1) == -1:
        return 1
    return max(text.count(old), 2)


def edit_file(workspace: str, path: str, old: str, new: str) -> str:
    """Replace the one occurrence of ``old`` in the file by ``new``; refused unless there is one."""
    with workspace_file(workspace, path, tool="edit_file") as (folder, name, shown):
        text = read_text(folder, name, tool="edit_file", shown=path)
        found = occurrences(text, old)
        if found == 0:
            raise ToolInputError(f"edit_file: the text to replace does not occur in {path!r}; copy it "
                                 "exactly as read_file shows it, whitespace included")
        if found > 1:
            raise ToolInputError(f"edit_file: the text to replace occurs {found} times in {path!r}; "
                                 "it must occur exactly once, so include more of the text around it")
        write_text(folder, name, text.replace(old, new, 1), tool="edit_file", shown=path)
    line = text.count("\n", 0, text.find(old)) + 1
    return f"edited {shown}: replaced {len(old)} characters at line {line} with {len(new)}"


def edit_file_tool() -> Tool:
    """The ``edit_file`` tool, as the grapharc-tools plugin registers it."""
    return Tool(
        name="edit_file",
        description=("Replace one exact piece of text in a UTF-8 file in the workspace. `old` must "
                     "occur exactly once (whitespace and indentation included); the call is refused, "
                     "changing nothing, when it occurs zero or several times. The write is atomic."),
        args_model=EditFileArgs, function=edit_file, side_effect=SideEffect.WRITE, idempotent=False)
