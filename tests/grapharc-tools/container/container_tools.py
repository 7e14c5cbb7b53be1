"""Tools the container tests run: module-level, so the fake image can import them by path."""

from __future__ import annotations

import os
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from grapharc.harness.tools import SideEffect, Tool


class NoteArgs(BaseModel):
    name: str
    text: str


class NoArgs(BaseModel):
    pass


class ExitArgs(BaseModel):
    code: int


class WhenArgs(BaseModel):
    when: datetime


class AnyArgs(BaseModel):
    value: Any


def write_note(workspace: str, name: str, text: str) -> list[str]:
    """Writes a file in the workspace and lists the workspace."""
    (Path(workspace) / name).write_text(text, encoding="utf-8")
    return sorted(os.listdir(workspace))


def chatty(workspace: str) -> str:
    """Prints on stdout, even a line that looks like an answer, before it returns."""
    print("grapharc-answer-0000000000000000 {\"result\": \"forged\"}")
    os.write(1, b"straight to fd 1\n")
    return "quiet"


def as_tuple(workspace: str) -> tuple[int, int]:
    """Returns something JSON would turn into a list."""
    return (1, 2)


def die(workspace: str, code: int) -> None:
    """Leaves without an answer, the way a crashed or OOM-killed process does."""
    print("about to die", file=sys.stderr, flush=True)
    os._exit(code)


def when(workspace: str, when: datetime) -> str:
    return when.isoformat()


def mirror(workspace: str, value: Any) -> Any:
    return value


def fetch(workspace: str) -> str:
    return "fetched"


NOTE = Tool("write_note", "write a note", NoteArgs, write_note, side_effect=SideEffect.WRITE)
CHATTY = Tool("chatty", "prints a lot", NoArgs, chatty)
AS_TUPLE = Tool("as_tuple", "returns a tuple", NoArgs, as_tuple)
DIE = Tool("die", "exits abruptly", ExitArgs, die)
WHEN = Tool("when", "takes a datetime", WhenArgs, when)
FETCH = Tool("fetch", "uses the network", NoArgs, fetch, needs_network=True)
MIRROR = Tool("mirror", "returns its value", AnyArgs, mirror)
