"""What this machine can reach for a backend: key present, endpoint answering, executable on PATH.

Each check is a plain ``{"name", "ok", "detail"}`` dict so ``grapharc models --check``
can print any backend's checks without importing this distribution's types.
Endpoint checks are one short GET of ``/models`` (free on every provider), never a
completion, so a check costs nothing.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from grapharc.gateway.credentials import lookup


def check(name: str, ok: bool, detail: str) -> dict[str, Any]:
    """One check's result."""
    return {"name": name, "ok": ok, "detail": detail}


def key_check(variable: str, *, env_file: Path | str | None = None) -> dict[str, Any]:
    """Whether ``variable`` is set, and where (its value is never shown)."""
    value, where = lookup(variable, env_file=env_file)
    if value is None:
        return check("key", False, f"{variable} is not set (environment or ./.env)")
    return check("key", True, f"{variable} is set ({where})")


def endpoint_check(base_url: str, api_key: str | None, *, timeout: float = 3.0) -> dict[str, Any]:
    """Whether ``GET {base_url}/models`` answers 2xx within ``timeout`` seconds."""
    url = f"{base_url.rstrip('/')}/models"
    if not url.startswith(("http://", "https://")):
        return check("endpoint", False, f"{url} is not an http(s) URL")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout) as answer:  # noqa: S310 -- only http(s) reaches here (checked above)
            status = answer.status
    except urllib.error.HTTPError as error:
        status = error.code
    except (OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        return check("endpoint", False, f"{url} did not answer ({type(error).__name__}: {reason})")
    return check("endpoint", 200 <= status < 300, f"{url} answered HTTP {status}")


def executable_check(name: str, *, timeout: float = 10.0) -> dict[str, Any]:
    """Whether ``name`` is on PATH, and the version it reports."""
    path = shutil.which(name)
    if path is None:
        return check("executable", False, f"{name} is not on PATH")
    try:
        with tempfile.TemporaryDirectory(prefix="grapharc-probe-") as cwd:
            completed = subprocess.run([path, "--version"], capture_output=True, text=True,  # noqa: S603 -- argv list, no shell; the CLI found on PATH
                                       timeout=timeout, cwd=cwd, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        return check("executable", False, f"{path} did not run ({type(error).__name__}: {error})")
    version = (completed.stdout.strip().splitlines() or ["no version printed"])[0]
    if completed.returncode != 0:
        return check("executable", False, f"{path} --version exited {completed.returncode}")
    return check("executable", True, f"{path} ({version})")
