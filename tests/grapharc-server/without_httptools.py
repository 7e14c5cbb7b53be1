"""``grapharc serve`` as it runs where httptools is not installed (uvicorn's h11 protocol serves).

Usage: ``python without_httptools.py [grapharc serve options...]``.
"""

from __future__ import annotations

import sys

sys.modules["httptools"] = None  # type: ignore[assignment]  # ``import httptools`` now fails

from grapharc.cli.main import run  # noqa: E402 -- after httptools is made unimportable

if __name__ == "__main__":
    sys.exit(run(["serve", *sys.argv[1:]]))
