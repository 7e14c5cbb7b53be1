"""grapharc-tools' hook implementations: the seven workspace-confined tools and the sandboxed and
container executors (light module)."""

from __future__ import annotations

from grapharc.plugins import ExecutorInfo, RegisterExecutor, RegisterTool, ToolInfo, hookimpl


@hookimpl
def register_tools(register: RegisterTool) -> None:
    register(ToolInfo(name="read_file", factory="grapharc.tools.read:read_file_tool",
                      description="read a window of a UTF-8 text file in the workspace"))
    register(ToolInfo(name="write_file", factory="grapharc.tools.write:write_file_tool",
                      description="create or replace a text file in the workspace, atomically"))
    register(ToolInfo(name="edit_file", factory="grapharc.tools.edit:edit_file_tool",
                      description="replace one exact, unique piece of text in a workspace file"))
    register(ToolInfo(name="list_dir", factory="grapharc.tools.listing:list_dir_tool",
                      description="list a directory in the workspace"))
    register(ToolInfo(name="glob", factory="grapharc.tools.listing:glob_tool",
                      description="find workspace paths matching a glob"))
    register(ToolInfo(name="grep", factory="grapharc.tools.search:grep_tool",
                      description="search workspace text files with a regular expression"))
    register(ToolInfo(name="run_command", factory="grapharc.tools.command:run_command_tool",
                      description="run a program from an argv list in the workspace"))


@hookimpl
def register_executors(register: RegisterExecutor) -> None:
    """The sandboxed and container executors."""
    register(ExecutorInfo(name="sandboxed", factory="grapharc.tools.sandbox:create_sandboxed_executor",
                          description="each call in a fresh forked child under a CPython audit hook"))
    register(ExecutorInfo(name="container", factory="grapharc.tools.container:create_container_executor",
                          description="each call in a throwaway Docker container: only the workspace "
                                      "mounted, no network unless declared, non-root, read-only root"))
