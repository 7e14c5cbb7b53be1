"""Reading a file a user named (config, policy, graph, rate card) with one set of refusals.

A directory, an unreadable path, a file over the size limit, or binary data is
refused with an error of the caller's class naming the file and what was wrong,
so no command meets a traceback or reads a huge file into memory by mistake.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from pathlib import Path

from grapharc.errors import GraphARCError

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"))


def not_regular(mode: int) -> str:
    """What a non-regular file is ("a directory", "a FIFO (named pipe)", ...); "" for a regular one."""
    return next((name for test, name in _KINDS if test(mode)), "" if stat.S_ISREG(mode) else
                "not a regular file")


def open_regular(path: Path) -> io.BufferedReader:
    """``path`` opened for binary reading, refused (OSError) unless it is a regular file.

    Opened without blocking, so a FIFO with no writer is refused instead of hanging the reader.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    mode = os.fstat(fd).st_mode
    kind = not_regular(mode)
    if kind:
        os.close(fd)
        error = IsADirectoryError if stat.S_ISDIR(mode) else OSError
        raise error(errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL,
                    f"is {kind}, not a regular file", str(path))
    os.set_blocking(fd, True)
    return io.BufferedReader(io.FileIO(fd, "rb"))


def read_user_bytes(path: Path, *, what: str, limit: int, error: type[GraphARCError],
                    kind: str) -> bytes:
    """The bytes of ``path`` (``what`` names it, e.g. "policy file"; ``kind`` is "TOML"/"JSON")."""
    if path.is_dir():
        raise error(f"{what} {path} is a directory, not a {kind} file")
    try:
        with open_regular(path) as handle:
            raw = handle.read(limit + 1)
    except ValueError:  # an embedded NUL byte in the name
        raise error(f"{what} {path!r} is not a usable file name") from None
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise error(f"{what} {path} is larger than {limit} bytes")
    if b"\x00" in raw:
        raise error(f"{what} {path} is binary data, not {kind}")
    return raw


def read_user_text(path: Path, *, what: str, limit: int, error: type[GraphARCError],
                   kind: str) -> str:
    """``read_user_bytes`` decoded as UTF-8, naming the first bad byte otherwise."""
    raw = read_user_bytes(path, what=what, limit=limit, error=error, kind=kind)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{what} {path} is not UTF-8 (byte {exc.start})") from None
