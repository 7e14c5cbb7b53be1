"""grapharc.memory exports the artifact names lazily, and names the plugin to install when missing."""

from __future__ import annotations

import subprocess
import sys

LAZY = """
import sys
import grapharc.memory
before = [m for m in ("grapharc.memory.artifacts", "grapharc.memory.sqlite.artifacts")
          if m in sys.modules]
from grapharc.memory import Artifact, ArtifactStore, InMemoryArtifactStore, SQLiteArtifactStore
print(before, Artifact.__module__, InMemoryArtifactStore.__module__, SQLiteArtifactStore.__module__)
"""

WITHOUT_THE_SQLITE_PLUGIN = """
import grapharc.memory
grapharc.memory.__path__[:] = [p for p in grapharc.memory.__path__ if "memory-sqlite" not in p]
try:
    from grapharc.memory import SQLiteArtifactStore
except ModuleNotFoundError as error:
    print(error)
"""


def run_python(script: str) -> str:
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True).stdout


def test_artifact_names_resolve_on_first_use_and_not_before() -> None:
    assert run_python(LAZY).split() == [
        "[]", "grapharc.memory.artifacts", "grapharc.memory.inprocess_artifacts",
        "grapharc.memory.sqlite.artifacts"]


def test_a_missing_sqlite_plugin_says_which_distribution_to_install() -> None:
    message = run_python(WITHOUT_THE_SQLITE_PLUGIN)
    assert message.startswith("No module named 'grapharc.memory.sqlite': it is provided by "
                              "the grapharc-memory-sqlite distribution")
    assert "pip install ./grapharc-memory-sqlite" in message
