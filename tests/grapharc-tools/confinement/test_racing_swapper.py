"""A separate process swaps a workspace folder for a symlink out; no file tool ever reaches outside.

``swapper.py`` exchanges ``ws/d`` (a folder) and ``ws/.twin`` (a symlink to a folder outside) in
a tight loop, so ``d`` is one or the other at any moment. Each file tool is called a fixed number
of times while it flips, on each in-process way of running it: every answer is either the
workspace's own content or a refusal, nothing under ``outside`` is ever shown, and ``outside`` is
left exactly as it was (no file created, changed or replaced). Before ``grapharc.tools.beneath``
(issue 32, point 9) read_file returned the outside secret about once in fifteen calls and
write_file left files outside.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

SWAPPER = Path(__file__).with_name("swapper.py")
ATTEMPTS = {"local": 2000, "walk": 2000, "sandboxed": 120}
"""Calls per tool: a fork per call makes the sandboxed way slower (about 65 ms a call), so it gets
fewer; a hole that showed once in fifteen calls goes unseen in 120 with a chance of 1 in 4,000."""
CALLS = {
    "read_file": {"path": "d/secret.txt"},
    "write_file": {"path": "d/written.txt", "content": "written"},
    "edit_file": {"path": "d/secret.txt", "old": "secret", "new": "secret"},
    "list_dir": {"path": "d"},
    "glob": {"pattern": "d/**"},
    "grep": {"pattern": "secret", "path": "."},
}
"""One call per tool that names ``d``; edit_file's would rewrite the outside secret in place."""


@contextmanager
def swapping(folder: Path, twin: Path) -> Iterator[subprocess.Popen[str]]:
    """The swapper flipping ``folder`` and ``twin``, from its first flips until the block ends."""
    swapper = subprocess.Popen([sys.executable, str(SWAPPER), str(folder), str(twin)],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert swapper.stdout is not None
        assert swapper.stdout.readline().strip() == "ready"
        yield swapper
    finally:
        swapper.kill()
        swapper.wait()


@pytest.mark.parametrize("tool", sorted(CALLS))
def test_no_call_reaches_outside_while_a_folder_is_swapped_for_a_symlink(arena, call, way, tool):
    before = arena.snapshot()
    answers: dict[str, int] = {}
    with swapping(arena.folder, arena.twin) as swapper:
        for _ in range(ATTEMPTS[way[0]]):
            answer = str(call(tool, **CALLS[tool]))
            assert "OUTSIDE" not in answer and "outside-only" not in answer, answer
            answers[answer] = answers.get(answer, 0) + 1
        assert swapper.poll() is None, "the swapper stopped flipping before the calls ended"
    assert arena.snapshot() == before
    print(f"{tool} on {way[0]}: {sum(answers.values())} calls, answers {answers}")
