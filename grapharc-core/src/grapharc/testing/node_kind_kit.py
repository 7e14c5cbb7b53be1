"""A conformance kit for node-kind plugins: a planner can propose the kind, admission admits it, it runs.

Subclass ``NodeKindConformance`` in a class pytest collects, with the ``kind`` an installed
plugin registers, a ``goal`` and the state fields a run of a one-node graph of the kind ends
with (``expected``). The graph is checked and run by ``grapharc run``, in this process, as a
user would run a graph file of their own.

    class TestShout(NodeKindConformance):
        kind = "acme_shout"
        goal = "ship it"
        expected = {"shouted": "SHIP IT"}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from grapharc.planner import NodeSpec
from grapharc.planner.surface import registry_from_plugins
from grapharc.plugins import PluginHost
from grapharc.testing.cli import run_cli


class NodeKindConformance:
    """The node-kind contract as pytest tests; set ``kind``, ``goal`` and ``expected``."""

    kind: ClassVar[str]
    goal: ClassVar[str] = "a goal"
    expected: ClassVar[dict[str, Any]]

    @pytest.fixture
    def spec(self, grapharc_plugins: PluginHost) -> NodeSpec:
        """The kind as the installed plugins registered it."""
        return registry_from_plugins().get(self.kind)

    @pytest.fixture
    def graph(self, spec: NodeSpec, grapharc_workdir: Path) -> Path:
        """A graph file of one node of the kind, in a fresh working directory."""
        return self.write_graph(grapharc_workdir)

    def write_graph(self, folder: Path) -> Path:
        """Write ``graph.json`` into ``folder``: one node of the kind, given ``goal``."""
        path = folder / "graph.json"
        path.write_text(json.dumps({"nodes": [{"name": self.kind}],
                                    "edges": [{"source": "__start__", "target": self.kind}],
                                    "input": {"goal": self.goal}}))
        return path

    def budget(self, spec: NodeSpec) -> str:
        """A token budget the kind's worst case fits in."""
        return str(max(1, spec.worst_case.tokens))

    def test_the_kind_declares_what_it_writes_and_says_what_it_does(self, spec: NodeSpec) -> None:
        assert spec.writes, "a kind that writes nothing changes nothing"
        assert spec.description.strip()

    def test_the_expected_fields_are_among_those_it_declares(self, spec: NodeSpec) -> None:
        assert set(self.expected) <= set(spec.writes)

    def test_admission_admits_a_graph_of_the_kind(self, spec: NodeSpec, graph: Path) -> None:
        result = run_cli(["run", graph.name, "--check-only", "--max-tokens", self.budget(spec), "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["admission"]["status"] == "admitted"

    def test_a_graph_of_the_kind_runs_and_ends_with_the_expected_state(self, spec: NodeSpec,
                                                                      graph: Path) -> None:
        result = run_cli(["run", graph.name, "--max-tokens", self.budget(spec), "--json"])
        assert result.exit_code == 0, result.output
        state = json.loads(result.stdout)["state"]
        assert {field: state.get(field) for field in self.expected} == self.expected
