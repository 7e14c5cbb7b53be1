"""The Docker engines for the container executor's tests: the fake one, with an image that has the
test tools, and a real one with its image where there is one (``real_docker.py`` says when)."""

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
from real_docker import REQUIRE_ENV, REQUIRED, missing_engine  # noqa: E402


@pytest.fixture
def engine() -> Iterator[FakeDockerEngine]:
    with FakeDockerEngine(images()) as running:
        yield running


@pytest.fixture(scope="session")
def real_image() -> str:
    """The image to test on the real engine; the test skips without one, or fails under CI's
    ``GRAPHARC_REQUIRE_ENGINE=1``."""
    image, missing = missing_engine()
    if missing and REQUIRED:
        pytest.fail(f"{REQUIRE_ENV} is set but {missing}")
    if missing:
        pytest.skip(missing)
    return image
