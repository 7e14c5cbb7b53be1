"""The root of GraphARC's error classes.

Every error GraphARC raises on purpose derives from ``GraphARCError`` so the
CLI can print it as one line (and ``--json`` as a document) instead of a
traceback. ``hint`` tells the user what to do about it.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What a GraphARC process's exit status means: 0 did the job, 1 ran and the answer was
    negative, 2 could not run (a known error, a usage error)."""

    OK = 0
    NEGATIVE = 1
    CANNOT_RUN = 2


class GraphARCError(Exception):
    """An error GraphARC raises deliberately, with a message meant for a user."""

    hint: str = ""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        if hint:
            self.hint = hint

    @property
    def code(self) -> str:
        """A stable, machine-readable name for the error (its class name)."""
        return type(self).__name__


class ConfigurationError(GraphARCError):
    """A configuration value, file or flag could not be used."""
