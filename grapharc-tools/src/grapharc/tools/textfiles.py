"""Text files as the file tools see them: UTF-8 without NUL bytes, size-capped, replaced atomically.

A file with a NUL byte, or with bytes that are not UTF-8, is binary: it is refused with a
message rather than decoded into noise. A write goes to a temporary file in the target's own
directory and replaces the target with ``os.replace``, so a reader (or a crash) sees the old
content or the new one, never half of each.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from grapharc.tools.errors import ToolInputError

MAX_TEXT_BYTES = 32 * 1024 * 1024
"""The largest file read_file and edit_file decode (offsets count characters from the start)."""

SNIFF_BYTES = 8192
"""How much of a file is looked at for a NUL byte to tell binary from text (as git and grep do)."""

NEW_FILE_MODE = 0o644


def looks_binary(head: bytes) -> bool:
    """Whether the first bytes of a file mark it as binary (a NUL byte among them)."""
    return b"\x00" in head[:SNIFF_BYTES]


def read_text(target: Path, *, tool: str, shown: str) -> str:
    """The whole of the text file ``target`` (named ``shown`` in messages), or a ToolInputError."""
    if not target.is_file():
        what = "is a directory" if target.is_dir() else "is not a regular file" if target.exists() \
            else "does not exist"
        raise ToolInputError(f"{tool}: {shown!r} {what} in the workspace")
    size = target.stat().st_size
    if size > MAX_TEXT_BYTES:
        raise ToolInputError(f"{tool}: {shown!r} is {size} bytes, larger than the {MAX_TEXT_BYTES} bytes "
                             f"{tool} reads; search it with grep instead", hint="search it with grep instead")
    data = target.read_bytes()
    if b"\x00" in data:
        raise ToolInputError(f"{tool}: {shown!r} is a binary file (it contains NUL bytes); "
                             f"{tool} handles text only", hint="binary files cannot be read or edited")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolInputError(f"{tool}: {shown!r} is not UTF-8 text (undecodable byte at offset "
                             f"{exc.start}); {tool} handles text only",
                             hint="binary files cannot be read or edited") from None


def write_text(target: Path, text: str, *, tool: str) -> None:
    """Replace (or create) ``target`` with ``text`` atomically, keeping an existing file's mode
    (a new file gets ``NEW_FILE_MODE``)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolInputError(f"{tool}: the text cannot be written as UTF-8 ({exc.reason} at "
                             f"character {exc.start})", hint="send text without lone surrogates") from None
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = NEW_FILE_MODE
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
