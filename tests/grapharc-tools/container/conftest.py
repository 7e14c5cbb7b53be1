"""The fake Docker engine for the container executor's tests, with an image that has the test tools."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from container_images import images  # noqa: E402
from fake_docker import FakeDockerEngine  # noqa: E402


@pytest.fixture
def engine() -> Iterator[FakeDockerEngine]:
    with FakeDockerEngine(images()) as running:
        yield running
