"""The race, won every time: the folder is swapped for a symlink out right after the path is checked.

``Workspace.resolve`` is wrapped so that, having resolved a path that runs through ``d``, it
swaps ``d`` for the symlink out before the tool goes on: the worst moment a racing process could
pick, without waiting for luck. Every tool must then refuse, show nothing from outside, and leave
outside untouched. Before ``grapharc.tools.beneath`` each of these calls read or wrote outside.
"""

from __future__ import annotations

import os

import pytest

from grapharc.tools import ToolInputError, Workspace, WorkspaceEscape
from grapharc.tools.beneath import Beneath

CALLS = {
    "read_file": {"path": "d/secret.txt"},
    "write_file": {"path": "d/written.txt", "content": "written"},
    "edit_file": {"path": "d/secret.txt", "old": "secret", "new": "SECRET"},
    "list_dir": {"path": "d"},
    "glob": {"pattern": "d/**"},
    "grep": {"pattern": "secret", "path": "d"},
}


@pytest.fixture
def swapped_after_the_check(arena, monkeypatch):
    """Make the first resolve that passes through ``d`` swap ``d`` for the symlink out."""
    original = Workspace.resolve
    swaps = []

    def resolve_then_swap(self, path):
        resolved = original(self, path)
        if not swaps and str(path).startswith("d"):
            os.rename(arena.folder, arena.workspace / ".real")
            os.rename(arena.twin, arena.folder)
            swaps.append(path)
        return resolved

    monkeypatch.setattr(Workspace, "resolve", resolve_then_swap)


@pytest.mark.parametrize("tool", sorted(CALLS))
def test_a_folder_swapped_right_after_the_check_is_not_followed(arena, call, swapped_after_the_check, tool):
    before = arena.snapshot()
    answer = call(tool, **CALLS[tool])
    assert isinstance(answer, Exception), answer
    assert "OUTSIDE" not in str(answer) and "outside-only" not in str(answer)
    assert arena.snapshot() == before


@pytest.mark.parametrize("openat2", [True, False], ids=["openat2", "walk"])
@pytest.mark.parametrize("relative", ["link/secret.txt", "link", "d/../link/secret.txt", "abs/secret.txt",
                                      "../outside/secret.txt", "d/../../outside/secret.txt"])
def test_beneath_never_passes_a_symlink_on_the_way(arena, monkeypatch, openat2, relative):
    if not openat2:
        monkeypatch.setattr("grapharc.tools.beneath._openat2", lambda: None)
    (arena.workspace / "link").symlink_to("../outside")
    (arena.workspace / "abs").symlink_to(arena.outside)
    with Beneath(arena.workspace) as held, pytest.raises(WorkspaceEscape, match="not followed"):
        os.close(held.open(relative, os.O_RDONLY))


def test_a_path_swapped_while_it_is_resolved_is_a_tool_input_error(arena, monkeypatch):
    root = Workspace(arena.workspace)

    def racing_realpath(path):
        raise OSError(22, "Invalid argument", path)  # what realpath raises when a symlink it met is gone

    monkeypatch.setattr(os.path, "realpath", racing_realpath)
    with pytest.raises(ToolInputError, match="changed while it was being resolved"):
        root.resolve("d/secret.txt")
