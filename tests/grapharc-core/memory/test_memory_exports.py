"""grapharc.memory exports its public names lazily, and names the plugin to install when missing."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import grapharc.memory

LAZINESS = """
import sys
import grapharc.memory
loaded = [m for m in ("grapharc.memory.retrieval", "grapharc.memory.sqlite.store") if m in sys.modules]
from grapharc.memory import ClaimIndex, retrieve, render_context, SQLiteMemoryStore
print(loaded, retrieve.__module__, SQLiteMemoryStore.__module__)
"""

WITHOUT_THE_SQLITE_PLUGIN = """
import grapharc.memory
grapharc.memory.__path__[:] = [p for p in grapharc.memory.__path__ if "memory-sqlite" not in p]
try:
    from grapharc.memory import SQLiteMemoryStore
except ModuleNotFoundError as error:
    print(error)
"""


def run_python(script: str) -> str:
    finished = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              check=True)
    return finished.stdout


def test_public_names_resolve_on_first_use_and_not_before() -> None:
    assert run_python(LAZINESS).split() == [
        "[]", "grapharc.memory.retrieval", "grapharc.memory.sqlite.store"]


def test_every_export_resolves_and_no_submodule_shadows_one() -> None:
    submodules = {module.name for module in pkgutil.iter_modules(grapharc.memory.__path__)}
    assert not submodules & set(grapharc.memory.__all__)
    for name in grapharc.memory.__all__:
        assert getattr(grapharc.memory, name).__name__ == name


def test_a_missing_plugin_name_says_which_distribution_to_install() -> None:
    assert "provided by the grapharc-memory-sqlite distribution" in run_python(
        WITHOUT_THE_SQLITE_PLUGIN)
