"""The fuzz suite's working directory: a template of real state built once, copied per test."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from inputs import Workdir

from grapharc.testing import plugin_host
from grapharc.testing.cli import run_cli

GRAPH = {"nodes": [{"name": "gather", "kind": "collect_context"}, {"name": "sum", "kind": "summarize"}],
         "edges": [{"source": "__start__", "target": "gather"}, {"source": "gather", "target": "sum"}],
         "input": {"goal": "checkout outage"}}
POLICY = ('version = "fuzz"\n[[rules]]\nid = "n"\nresource = "node"\naction = "allow"\n'
          '[[rules]]\nid = "e"\nresource = "edge"\naction = "allow"\n')


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Real state made by the real commands: a paused credit thread and a run's trace."""
    root = tmp_path_factory.mktemp("fuzz-template")
    previous = Path.cwd()
    os.chdir(root)
    try:
        (root / "graph.json").write_text(json.dumps(GRAPH))
        with plugin_host(installed=False):
            made = [run_cli(["run", "graph.json", "--max-iterations", "5", "--trace", "t.jsonl"]),
                    run_cli(["demo", "approval", "run", "--application", "LN-7310", "--thread", "t1",
                             "--dir", "sessions"])]
    finally:
        os.chdir(previous)
    assert [result.exit_code for result in made] == [0, 0], [result.stderr for result in made]
    return root


@pytest.fixture
def workdir(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workdir]:
    """A copy of the template (plus the odd files) as the working directory, no GRAPHARC_* set,
    every installed plugin loaded."""
    root = tmp_path / "work"
    shutil.copytree(template, root)
    work = Workdir(root)
    work.build(json.dumps(GRAPH), POLICY, (template / "t.jsonl").read_text())
    monkeypatch.chdir(root)
    for name in [n for n in os.environ if n.startswith("GRAPHARC_")]:
        monkeypatch.delenv(name)
    with plugin_host():
        yield work
