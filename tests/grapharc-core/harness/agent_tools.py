"""Small module-level tools for the harness tests (the seven real ones live in grapharc-tools)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from grapharc.harness.tools import SideEffect, Tool, ToolRegistry


class NoteArgs(BaseModel):
    name: str = Field(pattern=r"^[a-z]+$")
    text: str


class ReadArgs(BaseModel):
    name: str = Field(pattern=r"^[a-z]+$")


class SizeArgs(BaseModel):
    chars: int = Field(ge=0, le=1_000_000)


def append_note(workspace: str, name: str, text: str) -> str:
    """Append ``text`` to the note ``name``: a write that must never happen twice."""
    with open(Path(workspace) / f"{name}.txt", "a", encoding="utf-8") as handle:
        handle.write(text + "\n")
    return f"appended to {name}"


def read_note(workspace: str, name: str) -> str:
    path = Path(workspace) / f"{name}.txt"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def big_output(workspace: str, chars: int) -> str:
    return "x" * chars


APPEND = Tool("append_note", "append a line to a note", NoteArgs, append_note,
              side_effect=SideEffect.WRITE, idempotent=False)
READ = Tool("read_note", "read a note", ReadArgs, read_note)
BIG = Tool("big_output", "return many characters", SizeArgs, big_output)


def registry() -> ToolRegistry:
    return ToolRegistry([APPEND, READ, BIG])


class DieArgs(BaseModel):
    marker: str = Field(pattern=r"^[a-z]+$")


def die_once(workspace: str, marker: str) -> str:
    """SIGKILL this process the first time (leaving ``marker`` behind); later calls just answer."""
    import os
    import signal

    flag = Path(workspace) / f"{marker}.flag"
    if not flag.exists():
        flag.write_text("killed once")
        os.kill(os.getpid(), signal.SIGKILL)
    return "alive"


DIE = Tool("die_once", "die the first time (a crash after the writes before it)", DieArgs, die_once)
DIE_MIDWAY = Tool("die_once", "a command the process dies in the middle of", DieArgs, die_once,
                  side_effect=SideEffect.EXEC, idempotent=False)
