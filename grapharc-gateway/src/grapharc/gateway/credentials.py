"""Credentials: the environment first, then a ``.env`` in the working directory, nowhere else.

No parent-directory search: a run must never be billed to a key in a file you
did not know about.
"""

from __future__ import annotations

import os
from pathlib import Path

from grapharc.errors import GraphARCError


class MissingCredentialError(GraphARCError):
    """A backend's API key is in neither the environment nor ./.env."""


def read_dotenv(path: Path) -> dict[str, str]:
    """``KEY=value`` lines of a .env file (``export`` prefixes and quotes allowed)."""
    values: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return values
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key.strip()] = value
    return values


def credential(variable: str, *, env_file: Path | None = None) -> str:
    """The value of ``variable`` from the environment or ``env_file`` (default ``./.env``)."""
    value = os.environ.get(variable)
    if value:
        return value
    path = env_file if env_file is not None else Path.cwd() / ".env"
    value = read_dotenv(path).get(variable)
    if value:
        return value
    raise MissingCredentialError(
        f"{variable} is not set",
        hint=f"export {variable}=... or put it in {path} (parent directories are not searched)")
