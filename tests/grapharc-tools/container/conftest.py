"""The fake Docker engine for the container executor's tests, with an image that has the test tools."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from fake_docker import FakeDockerEngine, FakeImage  # noqa: E402

IMAGE = "grapharc-tools-test:1"
"""Has this virtualenv's python (so GraphARC) and, on its PYTHONPATH, container_tools.py."""
BARE = "grapharc-only:1"
"""Has GraphARC but not the test tools."""


@pytest.fixture
def engine() -> Iterator[FakeDockerEngine]:
    images = {IMAGE: FakeImage(env={"PYTHONPATH": str(HERE)}), BARE: FakeImage()}
    with FakeDockerEngine(images) as running:
        yield running
