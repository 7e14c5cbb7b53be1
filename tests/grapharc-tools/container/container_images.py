"""The images the fake engine holds for the container tests (a uniquely named helper module)."""

from __future__ import annotations

from pathlib import Path

from fake_docker import FakeImage

HERE = Path(__file__).parent
IMAGE = "grapharc-tools-test:1"
"""Has this virtualenv's python (so GraphARC) and, on its PYTHONPATH, container_tools.py."""
BARE = "grapharc-only:1"
"""Has GraphARC but not the test tools."""


def images() -> dict[str, FakeImage]:
    return {IMAGE: FakeImage(env={"PYTHONPATH": str(HERE)}), BARE: FakeImage()}
