"""Fixtures for the confinement tests: a workspace whose folder ``d`` has a symlink twin pointing
outside, a snapshot of everything outside, and the file tools on each in-process way of running them.

The ways: ``local`` (openat2 where the kernel has it), ``walk`` (local with openat2 switched off,
so the component-by-component walk does the work) and ``sandboxed`` (the forked child, where
Landlock holds the line; skipped where the kernel has no Landlock).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from grapharc.harness.executors import Executor, LocalExecutor
from grapharc.harness.tools import ToolRegistry
from grapharc.tools import beneath, landlock

FILE_TOOLS = ("read_file", "write_file", "edit_file", "list_dir", "glob", "grep")
LEAKS = ("OUTSIDE", "outside-only")
"""Text found only outside the workspace: a result holding either has read outside."""


@dataclass(frozen=True)
class Arena:
    """``ws/d`` (a folder with ``secret.txt``), ``ws/.twin`` (a symlink to ``outside``), and
    ``outside`` (``secret.txt`` and ``outside-only.txt``, both marked OUTSIDE)."""

    workspace: Path
    folder: Path
    twin: Path
    outside: Path

    def snapshot(self) -> dict[str, tuple[str, str, int, int]]:
        """Every entry under ``outside``: its kind, a digest of its content, inode and mtime."""
        seen = {}
        for top, folders, files in os.walk(self.outside):
            for name in (*folders, *files):
                path = os.path.join(top, name)
                info = os.lstat(path)
                digest = hashlib.sha256(Path(path).read_bytes()).hexdigest() if name in files else ""
                seen[os.path.relpath(path, self.outside)] = ("file" if name in files else "folder", digest,
                                                             info.st_ino, info.st_mtime_ns)
        return seen


@pytest.fixture
def arena(tmp_path: Path) -> Arena:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE secret\n")
    (outside / "outside-only.txt").write_text("OUTSIDE only\n")
    workspace = tmp_path / "ws"
    folder = workspace / "d"
    folder.mkdir(parents=True)
    (folder / "secret.txt").write_text("inside secret\n")
    twin = workspace / ".twin"
    twin.symlink_to(outside, target_is_directory=True)
    return Arena(workspace, folder, twin, outside)


@pytest.fixture(scope="session")
def tools() -> ToolRegistry:
    return ToolRegistry.from_plugins(FILE_TOOLS)


@pytest.fixture(params=["local", "walk", "sandboxed"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Executor]]:
    """(name, executor) for each in-process way of running the file tools."""
    if request.param == "sandboxed":
        if landlock.abi() < 1:
            pytest.skip("this kernel has no Landlock: the sandboxed child's file access is then only "
                        "as race-free as its audit hook")
        from grapharc.tools import SandboxedExecutor

        yield request.param, SandboxedExecutor()
        return
    if request.param == "walk":
        monkeypatch.setattr(beneath, "_openat2", lambda: None)
    yield request.param, LocalExecutor()


@pytest.fixture
def call(tools: ToolRegistry, way: tuple[str, Executor], arena: Arena) -> Callable[..., Any]:
    """``call("read_file", path=...)``: one call in the arena's workspace on ``way``; a refusal
    (any GraphARC error) is returned, not raised, so a caller can count outcomes."""
    from grapharc.errors import GraphARCError

    executor = way[1]

    def call(name: str, **arguments: Any) -> Any:
        try:
            return executor.run(tools.get(name), arguments, workspace=arena.workspace, timeout=60.0)
        except GraphARCError as refused:
            return refused

    return call
