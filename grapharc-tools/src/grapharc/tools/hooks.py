"""grapharc-tools' hook implementations: the seven workspace-confined tools and the sandboxed and
container executors (light module)."""

from __future__ import annotations

from grapharc.plugins import ExecutorInfo, RegisterExecutor, RegisterTool, ToolInfo, hookimpl

TOOLS = (
    ("read_file", "read:read_file_tool", "read a window of a UTF-8 text file in the workspace"),
    ("write_file", "write:write_file_tool", "create or replace a text file in the workspace, atomically"),
    ("edit_file", "edit:edit_file_tool", "replace one exact, unique piece of text in a workspace file"),
    ("list_dir", "listing:list_dir_tool", "list a directory in the workspace"),
    ("glob", "listing:glob_tool", "find workspace paths matching a glob"),
    ("grep", "search:grep_tool", "search workspace text files with a regular expression"),
    ("run_command", "command:run_command_tool", "run a program from an argv list in the workspace"),
)
"""Each tool's name, its factory in ``grapharc.tools`` and what it does."""


@hookimpl
def register_tools(register: RegisterTool) -> None:
    for name, factory, description in TOOLS:
        register(ToolInfo(name=name, factory=f"grapharc.tools.{factory}", description=description))


@hookimpl
def register_executors(register: RegisterExecutor) -> None:
    """The sandboxed and container executors."""
    register(ExecutorInfo(name="sandboxed", factory="grapharc.tools.sandbox:create_sandboxed_executor",
                          description="each call in a fresh forked child under a CPython audit hook"))
    register(ExecutorInfo(name="container", factory="grapharc.tools.container:create_container_executor",
                          description="each call in a throwaway Docker container: only the workspace "
                                      "mounted, no network unless declared, non-root, read-only root"))
