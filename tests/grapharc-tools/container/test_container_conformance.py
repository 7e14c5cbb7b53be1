"""The executor conformance kit, run on the container executor: against the fake engine always,
and against a real Docker engine when one is reachable and an image to test is named."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from container_images import IMAGE
from fake_docker import FakeDockerEngine

from grapharc.harness.executors import ToolTimeoutError
from grapharc.testing.executor_kit import ECHO, ExecutorConformance
from grapharc.tools import ContainerExecutor

REAL_IMAGE_ENV = "GRAPHARC_TEST_CONTAINER_IMAGE"


class TestContainerExecutorOnTheFakeEngine(ExecutorConformance):
    """The fake runs the runner locally, in the workspace itself: the tool sees the host path."""

    @pytest.fixture(autouse=True)
    def _engine(self, engine: FakeDockerEngine) -> None:
        self.engine = engine

    def make_executor(self) -> ContainerExecutor:
        return ContainerExecutor(IMAGE, base_url=self.engine.base_url)


def real_engine() -> tuple[str | None, str]:
    """The image named for real-engine tests, or None and why they cannot run here."""
    image = os.environ.get(REAL_IMAGE_ENV)
    if not image:
        return None, (f"{REAL_IMAGE_ENV} names no local image (with python, grapharc-tools and pytest "
                      "inside; it is never pulled)")
    try:
        import docker

        docker.from_env().ping()
    except Exception as exc:
        return None, f"no Docker engine is reachable ({type(exc).__name__}: {exc})"
    return image, ""


REAL_IMAGE, NO_ENGINE = real_engine()


@pytest.mark.skipif(REAL_IMAGE is None, reason=NO_ENGINE)
class TestContainerExecutorOnARealEngine(ExecutorConformance):
    """In a real container the workspace is mounted at /workspace, which is what the tool sees."""

    def make_executor(self) -> ContainerExecutor:
        assert REAL_IMAGE is not None
        return ContainerExecutor(REAL_IMAGE)

    @pytest.fixture
    def workspace(self, tmp_path: Path) -> Path:
        tmp_path.chmod(0o777)  # whichever uid the engine maps the caller to can write there
        return tmp_path

    def test_the_tool_gets_the_workspace_and_defaults_apply(self, workspace: Path) -> None:
        result: Any = self.make_executor().run(ECHO, {}, workspace=workspace)
        assert result == {"text": "default", "workspace": "/workspace"}

    @pytest.mark.parametrize("tool", ["hang", "stubborn"])
    def test_a_timed_out_tools_process_is_gone(self, tool: str, workspace: Path) -> None:
        """A pid from inside a container means nothing on the host: its container must be gone."""
        import docker

        from grapharc.testing import executor_kit

        with pytest.raises(ToolTimeoutError):
            self.make_executor().run(getattr(executor_kit, tool.upper()), {"seconds": 60},
                                     workspace=workspace, timeout=2.0)
        left = docker.from_env().containers.list(all=True, filters={"label": f"grapharc.tool={tool}"})
        assert left == []
