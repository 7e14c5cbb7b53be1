"""Lines for the operator on stderr, which may have no reader left.

A server's stderr can outlive whoever read it (the terminal closed, a log pipe's reader died).
Writing a notice there must never raise: a stop that failed while announcing itself never
stopped (SIGTERM's handler raised before it started the drain's deadline, so a drain that
could not finish waited forever).
"""

from __future__ import annotations

import contextlib
import sys


def notice(message: str) -> None:
    """Write ``message`` as a line on stderr; nothing when stderr is closed or broken."""
    with contextlib.suppress(OSError, ValueError):  # ValueError: the stream is closed
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
