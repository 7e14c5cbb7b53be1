"""Text files as the file tools see them: UTF-8 without NUL bytes, size-capped, replaced atomically.

A file with a NUL byte, or with bytes that are not UTF-8, is binary: it is refused with a
message rather than decoded into noise. A write goes to a temporary file in the target's own
directory and replaces the target with ``os.replace``, so a reader (or a crash) sees the old
content or the new one, never half of each. Files are named as entries of a folder held open
(``grapharc.tools.beneath``), so a symlink swapped in on the way is never followed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator

from grapharc.tools.beneath import Beneath, Directory
from grapharc.tools.errors import ToolInputError, os_errors
from grapharc.tools.workspace import Workspace, WorkspaceEscape

MAX_TEXT_BYTES = 32 * 1024 * 1024
"""The largest file read_file and edit_file decode (offsets count characters from the start)."""

SNIFF_BYTES = 8192
"""How much of a file is looked at for a NUL byte to tell binary from text (as git and grep do)."""

NEW_FILE_MODE = 0o644


def looks_binary(head: bytes) -> bool:
    """Whether the first bytes of a file mark it as binary (a NUL byte among them)."""
    return b"\x00" in head[:SNIFF_BYTES]


@contextlib.contextmanager
def workspace_file(workspace: str, path: str, *, tool: str,
                   create: bool = False) -> Iterator[tuple[Directory, str, str]]:
    """For the file argument ``path``: its folder held open (created first if ``create``), its name
    there, and its workspace-relative real path. The operating system's refusals inside the
    block become ToolInputErrors naming ``tool`` and ``path``."""
    root = Workspace(workspace)
    relative = root.relative(root.resolve(path))
    parent, _, name = relative.rpartition("/")
    with os_errors(tool, path), Beneath(root.root) as held, \
            held.directory(parent or ".", create=create) as folder:
        yield folder, name, relative


def read_text(folder: Directory, name: str, *, tool: str, shown: str) -> str:
    """The whole of the text file ``name`` in ``folder`` (named ``shown`` in messages), or a
    ToolInputError. Opened without following a symlink, checked on the open descriptor."""
    try:
        entry = folder.lstat(name)
    except FileNotFoundError:
        raise ToolInputError(f"{tool}: {shown!r} does not exist in the workspace") from None
    _regular(entry, tool, shown)
    with os.fdopen(folder.open(name, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:  # a FIFO must not block
        opened = os.fstat(handle.fileno())
        _regular(opened, tool, shown)
        if opened.st_size > MAX_TEXT_BYTES:
            raise ToolInputError(f"{tool}: {shown!r} is {opened.st_size} bytes, larger than the "
                                 f"{MAX_TEXT_BYTES} bytes {tool} reads; search it with grep instead",
                                 hint="search it with grep instead")
        data = handle.read(MAX_TEXT_BYTES + 1)
    if b"\x00" in data:
        raise ToolInputError(f"{tool}: {shown!r} is a binary file (it contains NUL bytes); "
                             f"{tool} handles text only", hint="binary files cannot be read or edited")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolInputError(f"{tool}: {shown!r} is not UTF-8 text (undecodable byte at offset "
                             f"{exc.start}); {tool} handles text only",
                             hint="binary files cannot be read or edited") from None


def _regular(entry: os.stat_result, tool: str, shown: str) -> None:
    """Refuse anything but a regular file, saying what it is."""
    if stat.S_ISREG(entry.st_mode):
        return
    what = "is a directory" if stat.S_ISDIR(entry.st_mode) else "is not a regular file"
    raise ToolInputError(f"{tool}: {shown!r} {what} in the workspace")


def write_text(folder: Directory, name: str, text: str, *, tool: str, shown: str) -> bool:
    """Replace (or create) the file ``name`` in ``folder`` with ``text`` atomically, keeping an
    existing file's mode (a new file gets ``NEW_FILE_MODE``); whether it existed before.

    The temporary file is created in ``folder`` itself and renamed over ``name`` there, so both
    steps name entries of the one folder held open, never a path a racing process could redirect.
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolInputError(f"{tool}: the text cannot be written as UTF-8 ({exc.reason} at "
                             f"character {exc.start})", hint="send text without lone surrogates") from None
    try:
        entry: os.stat_result | None = folder.lstat(name)
    except FileNotFoundError:
        entry = None
    if entry is not None and stat.S_ISDIR(entry.st_mode):
        raise ToolInputError(f"{tool}: {shown!r} is a directory")
    if entry is not None and stat.S_ISLNK(entry.st_mode):
        raise WorkspaceEscape(f"path {shown!r} became a symlink while {tool} used it; it is not followed")
    mode = stat.S_IMODE(entry.st_mode) if entry is not None else NEW_FILE_MODE
    temp = f".{name[:40]}.{secrets.token_hex(6)}.tmp"  # short: the name itself may take all 255 bytes
    fd = folder.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            os.fchmod(handle.fileno(), mode)
        folder.replace(temp, name)
    except BaseException:
        with contextlib.suppress(OSError):
            folder.unlink(temp)
        raise
    return entry is not None
