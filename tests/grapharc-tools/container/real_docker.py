"""The real Docker engine for the container tests: the image to test on it, or why there is none.

``GRAPHARC_TEST_CONTAINER_IMAGE`` names a local image (python, grapharc-tools and pytest inside;
it is never pulled) and ``DOCKER_HOST`` (or the SDK's default socket) the engine. Without them the
real-engine tests skip and say why; with ``GRAPHARC_REQUIRE_ENGINE=1`` (CI: ``.ci/engine`` builds
the image on a private engine and sets it) they fail instead.
"""

from __future__ import annotations

import os

IMAGE_ENV = "GRAPHARC_TEST_CONTAINER_IMAGE"
REQUIRE_ENV = "GRAPHARC_REQUIRE_ENGINE"
REQUIRED = os.environ.get(REQUIRE_ENV, "") not in {"", "0"}
"""CI sets this: there the real-engine tests must run, so a missing engine or image fails them."""


def missing_engine() -> tuple[str, str | None]:
    """The image named for real-engine tests, and None, or why they cannot run here."""
    image = os.environ.get(IMAGE_ENV, "")
    if not image:
        return image, (f"{IMAGE_ENV} names no local image (with python, grapharc-tools and pytest "
                       "inside; it is never pulled); .ci/engine builds one on a private engine")
    try:
        import docker
        from docker.errors import DockerException, ImageNotFound
    except ImportError:
        return image, "the docker SDK is not installed (grapharc-tools[container])"
    try:
        client = docker.from_env()
        client.ping()
    except DockerException as exc:
        where = os.environ.get("DOCKER_HOST", "the default socket")
        return image, f"no Docker engine answers at {where} ({type(exc).__name__}: {exc})"
    try:
        client.images.get(image)
    except ImageNotFound:
        return image, f"image {image!r} ({IMAGE_ENV}) is not on the engine (it is never pulled)"
    finally:
        client.close()
    return image, None
