"""The executor conformance kit, run on the container executor: against the fake engine always,
and against a real Docker engine when one answers and an image to test is named (``real_docker``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from container_images import IMAGE
from fake_docker import FakeDockerEngine

from grapharc.harness.executors import ToolTimeoutError
from grapharc.testing.executor_kit import ECHO, ExecutorConformance
from grapharc.tools import ContainerExecutor


class TestContainerExecutorOnTheFakeEngine(ExecutorConformance):
    """The fake runs the runner locally, in the workspace itself: the tool sees the host path."""

    @pytest.fixture(autouse=True)
    def _engine(self, engine: FakeDockerEngine) -> None:
        self.engine = engine

    def make_executor(self) -> ContainerExecutor:
        return ContainerExecutor(IMAGE, base_url=self.engine.base_url)


class TestContainerExecutorOnARealEngine(ExecutorConformance):
    """In a real container the workspace is mounted at /workspace, which is what the tool sees."""

    @pytest.fixture(autouse=True)
    def _image(self, real_image: str) -> None:
        self.image = real_image

    def make_executor(self) -> ContainerExecutor:
        return ContainerExecutor(self.image)

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
