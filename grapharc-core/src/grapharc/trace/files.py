"""Opening a trace file for reading, refused by name when it cannot be one.

A missing path, a directory, an unreadable file or one holding binary data is a
``TraceUnreadableError`` saying which, before any line is read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

from grapharc._files import open_regular
from grapharc.trace.errors import TraceUnreadableError

_SNIFF_BYTES = 8192


def open_trace(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a trace for binary reading, or raise TraceUnreadableError saying why it cannot be."""
    where = Path(path)
    hint = "pass the path of a JSONL trace a GraphARC run wrote"
    try:
        handle = open_regular(where)
    except FileNotFoundError:
        raise TraceUnreadableError(f"{where}: no such trace file", hint=hint) from None
    except IsADirectoryError:
        raise TraceUnreadableError(f"{where}: is a directory, not a trace file", hint=hint) from None
    except PermissionError:
        raise TraceUnreadableError(f"{where}: permission denied", hint="check the file's mode") from None
    except OSError as exc:
        raise TraceUnreadableError(f"{where}: cannot be read ({exc.strerror or exc})", hint=hint) from None
    except ValueError:  # an embedded NUL byte in the name
        raise TraceUnreadableError(f"{where!r}: is not a usable file name", hint=hint) from None
    try:
        head = handle.peek(_SNIFF_BYTES)[:_SNIFF_BYTES]
    except OSError as exc:
        handle.close()
        raise TraceUnreadableError(f"{where}: cannot be read ({exc.strerror or exc})", hint=hint) from None
    if b"\x00" in head:
        handle.close()
        raise TraceUnreadableError(f"{where}: holds binary data, not a JSONL trace", hint=hint)
    return handle
