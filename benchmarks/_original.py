"""Where a benchmark finds GraphARC 0.1.7, the original the seeds describe, to measure against in
the same run: the ``bin`` folder of a virtualenv it is installed in (it imports as ``grapharc``
too, so it never shares ours)."""

from __future__ import annotations

from pathlib import Path

from _checked import expect

DEFAULT_ORIGINAL = Path.home() / ".cache" / "grapharc-017" / "bin"
"""Where .ci/run installs it (Python 3.12, ``pip install grapharc==0.1.7``)."""


def original_bin(given: str | None, needs: str) -> Path | None:
    """The original's ``bin`` folder: ``--original`` (which must hold the executable ``needs``),
    else the default when that holds it; ``none``: skip the original."""
    if given == "none":
        return None
    if given is None:
        return DEFAULT_ORIGINAL if (DEFAULT_ORIGINAL / needs).exists() else None
    expect((Path(given) / needs).exists(), f"--original {given}: no {needs} in that folder")
    return Path(given)
