"""Landlock, as the sandboxed child uses it: after ``restrict``, the kernel refuses what lies outside.

Each check runs in a fresh Python process (a restriction is for good), which prints what each
access did. Skipped where the kernel offers no Landlock.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from grapharc.tools import landlock
from grapharc.tools.beneath import importable

pytestmark = pytest.mark.skipif(landlock.abi() < 1, reason="this kernel offers no Landlock")

PROBE = """
import json, os, sys
from grapharc.tools import landlock
from grapharc.tools.beneath import importable
readable, writable, outside = sys.argv[1:4]
restricted = landlock.restrict([*((path, landlock.READ) for path in (readable, *sys.argv[4:])),
                                (writable, landlock.WRITE)])

def attempt(action):
    try:
        action()
        return "ok"
    except OSError as exc:
        return type(exc).__name__

print(json.dumps({
    "restricted": restricted,
    "read inside": attempt(lambda: open(os.path.join(readable, "a.txt")).read()),
    "write where only reading is allowed": attempt(lambda: open(os.path.join(readable, "b.txt"), "w")),
    "write inside": attempt(lambda: open(os.path.join(writable, "c.txt"), "w").write("x")),
    "read outside": attempt(lambda: open(os.path.join(outside, "secret.txt")).read()),
    "list outside": attempt(lambda: os.listdir(outside)),
    "write outside": attempt(lambda: open(os.path.join(outside, "new.txt"), "w")),
    "through a symlink out": attempt(lambda: open(os.path.join(writable, "out", "secret.txt")).read()),
}))
"""


def test_after_restrict_only_the_named_folders_can_be_reached(tmp_path):
    readable, writable, outside = tmp_path / "readable", tmp_path / "writable", tmp_path / "outside"
    for folder in (readable, writable, outside):
        folder.mkdir()
    (readable / "a.txt").write_text("a")
    (outside / "secret.txt").write_text("secret")
    (writable / "out").symlink_to(outside)
    done = subprocess.run([sys.executable, "-c", PROBE, str(readable), str(writable), str(outside),
                           *sys.path[1:]], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert json.loads(done.stdout) == {
        "restricted": True, "read inside": "ok", "write where only reading is allowed": "PermissionError",
        "write inside": "ok", "read outside": "PermissionError", "list outside": "PermissionError",
        "write outside": "PermissionError", "through a symlink out": "PermissionError"}
    assert not (outside / "new.txt").exists()


def test_a_search_path_entry_gives_the_kernel_rules_its_modules_and_packages_not_its_other_files(tmp_path):
    (tmp_path / "helper.py").write_text("")
    (tmp_path / "secret.txt").write_text("secret")
    (tmp_path / "package").mkdir()
    (tmp_path / "package" / "__init__.py").write_text("")
    (tmp_path / "sibling").mkdir()
    (tmp_path / "sibling" / "secret.txt").write_text("secret")
    assert sorted(importable([str(tmp_path)])) == [
        (str(tmp_path), landlock.LIST), (str(tmp_path / "helper.py"), landlock.READ_FILE),
        (str(tmp_path / "package"), landlock.READ)]
