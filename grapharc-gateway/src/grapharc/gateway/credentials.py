"""Credentials and endpoint settings: the environment first, then one ``.env`` file, nowhere else.

The file is ``./.env`` in the working directory unless ``env_file=`` names one.
No parent-directory search: a run must never be billed to a key in a file you
did not know about. A real environment variable beats any file. A credential read from the
file is registered as a secret, so runs redact it as they do the environment's keys.
"""

from __future__ import annotations

import os
from pathlib import Path

from grapharc.gateway.errors import MissingCredentialError
from grapharc.redaction import register_secret


def read_dotenv(path: Path) -> dict[str, str]:
    """``KEY=value`` lines of a .env file (``export`` prefixes, quotes and ``# comments`` allowed)."""
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
        else:
            value = value.split(" #", 1)[0].strip()
        values[key.strip()] = value
    return values


def dotenv_path(env_file: Path | str | None = None) -> Path:
    """The one file consulted: ``env_file`` when given, else ``.env`` in the working directory."""
    return Path(env_file) if env_file is not None else Path.cwd() / ".env"


def lookup(variable: str, *, env_file: Path | str | None = None) -> tuple[str | None, str]:
    """``(value, where)`` for ``variable``: where is ``environment``, the file's path, or ``""``."""
    value = os.environ.get(variable)
    if value:
        return value, "environment"
    path = dotenv_path(env_file)
    value = read_dotenv(path).get(variable)
    if value:
        register_secret(value, variable)
        return value, str(path)
    return None, ""


def credential(variable: str, *, env_file: Path | str | None = None) -> str:
    """The value of ``variable``; a clear MissingCredentialError naming it when it is nowhere."""
    value, _ = lookup(variable, env_file=env_file)
    if value is None:
        raise MissingCredentialError(
            f"{variable} is not set",
            hint=f"export {variable}=... or put it in {dotenv_path(env_file)} "
                 "(parent directories are not searched)")
    return value
