"""Fixtures for the seven tools: a workspace with a secret next door, and a way to call a tool.

Every call goes the way an agent's does: the tool is built by the factory grapharc-tools
registered, its arguments are validated by its args model, and ``LocalExecutor`` runs it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from grapharc.harness.executors import LocalExecutor
from grapharc.harness.tools import ToolRegistry

sys.path.insert(0, str(Path(__file__).parent))

from tool_names import SEVEN


@pytest.fixture(scope="session")
def tools() -> ToolRegistry:
    return ToolRegistry.from_plugins(SEVEN)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """``tmp/ws``, with ``tmp/secret.txt`` outside it and ``tmp/ws-evil`` sharing its prefix."""
    (tmp_path / "secret.txt").write_text("outside the workspace\n")
    (tmp_path / "ws-evil").mkdir()
    (tmp_path / "ws-evil" / "loot.txt").write_text("sibling with the workspace's prefix\n")
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def call(tools: ToolRegistry, workspace: Path) -> Callable[..., Any]:
    """``call("read_file", path="a.txt")``: one tool call in ``workspace`` through LocalExecutor."""
    executor = LocalExecutor()

    def call(name: str, *, executor_timeout: float = 120.0, **arguments: Any) -> Any:
        return executor.run(tools.get(name), arguments, workspace=workspace, timeout=executor_timeout)

    return call
