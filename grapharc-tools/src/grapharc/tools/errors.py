"""The error a tool raises when its arguments are valid but name something it cannot act on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from grapharc.errors import GraphARCError


class ToolInputError(GraphARCError, ValueError):
    """A missing file, a directory where a file was meant, a binary file, an edit whose text is
    not found or not unique, a program that does not exist: the call did nothing."""

    hint = "check the path with list_dir or glob, then call the tool again"


@contextmanager
def os_errors(tool: str, path: str) -> Iterator[None]:
    """Turn the operating system's refusal (no such file, not a directory...) into a
    ToolInputError naming the tool and the path; GraphARC's own errors pass through untouched
    (a WorkspaceEscape, or an executor's sandbox violation, is also an OSError)."""
    try:
        yield
    except GraphARCError:
        raise
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ToolInputError(f"{tool}: {path!r}: {reason}") from None
