"""The seven core tools, each call in its own container of an image that has grapharc-tools."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from container_images import IMAGE
from fake_docker import FakeDockerEngine

from grapharc.harness import ToolRegistry
from grapharc.harness.executors import ToolFailedError
from grapharc.tools import ContainerExecutor


def test_the_seven_tools_work_through_containers_and_still_confine_themselves(
        engine: FakeDockerEngine, tmp_path: Path) -> None:
    tools = ToolRegistry.from_plugins()
    run = ContainerExecutor(IMAGE, base_url=engine.base_url).run

    def call(name: str, **args: object) -> object:
        return run(tools.get(name), args, workspace=tmp_path)

    assert call("write_file", path="a/b.txt", content="hello\nworld\n") == "created a/b.txt (12 characters)"
    assert call("edit_file", path="a/b.txt", old="world", new="there").startswith("edited a/b.txt")
    assert call("read_file", path="a/b.txt") == "hello\nthere\n"
    assert call("list_dir", path="a") == "b.txt"
    assert call("glob", pattern="**/*.txt") == "a/b.txt"
    assert call("grep", pattern="the") == "a/b.txt:2: there"
    ran = call("run_command", argv=[sys.executable, "-c", "print(open('a/b.txt').read().upper())"])
    assert isinstance(ran, dict) and (ran["exit_code"], ran["stdout"]) == (0, "HELLO\nTHERE\n\n")
    with pytest.raises(ToolFailedError) as caught:
        call("read_file", path="../../etc/passwd")
    assert caught.value.exception_type == "WorkspaceEscape"
    assert len(engine.removed) == 8 and engine.containers == {}
