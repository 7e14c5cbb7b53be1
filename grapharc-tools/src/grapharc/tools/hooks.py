"""grapharc-tools' hook implementations: workspace-confined file tools (light module)."""

from __future__ import annotations

from grapharc.plugins import ExecutorInfo, RegisterExecutor, RegisterTool, ToolInfo, hookimpl


@hookimpl
def register_tools(register: RegisterTool) -> None:
    register(ToolInfo(name="read_file", factory="grapharc.tools.files:read_file_tool",
                      description="read a UTF-8 file inside the workspace"))
    register(ToolInfo(name="write_file", factory="grapharc.tools.files:write_file_tool",
                      description="create or replace a text file inside the workspace"))
    register(ToolInfo(name="list_dir", factory="grapharc.tools.files:list_dir_tool",
                      description="list a directory inside the workspace"))


@hookimpl(specname="register_executors")
def register_sandboxed_executor(register: RegisterExecutor) -> None:
    register(ExecutorInfo(name="sandboxed", factory="grapharc.tools.sandbox:create_sandboxed_executor",
                          description="each call in a fresh forked child under a CPython audit hook"))
