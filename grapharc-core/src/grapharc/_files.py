"""Reading a file a user named (config, policy, graph, rate card) with one set of refusals.

A directory, an unreadable path, a file over the size limit, or binary data is
refused with an error of the caller's class naming the file and what was wrong,
so no command meets a traceback or reads a huge file into memory by mistake.
"""

from __future__ import annotations

from pathlib import Path

from grapharc.errors import GraphARCError


def read_user_bytes(path: Path, *, what: str, limit: int, error: type[GraphARCError],
                    kind: str) -> bytes:
    """The bytes of ``path`` (``what`` names it, e.g. "policy file"; ``kind`` is "TOML"/"JSON")."""
    if path.is_dir():
        raise error(f"{what} {path} is a directory, not a {kind} file")
    try:
        with path.open("rb") as handle:
            raw = handle.read(limit + 1)
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
