"""Core's own kinds pass the node-kind kit; one that writes what it did not declare does not."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from grapharc.planner import CostEstimate, NodeSpec
from grapharc.plugins import hookimpl
from grapharc.testing import in_process_source, plugin_host
from grapharc.testing.node_kind_kit import NodeKindConformance
from grapharc.testing.plugin_kit import InstalledPluginConformance


class TestCollectContext(NodeKindConformance):
    kind = "collect_context"
    goal = "why is checkout slow"
    expected: ClassVar[dict[str, Any]] = {"context": ["goal: why is checkout slow"]}


def leaky_factory(spec: NodeSpec) -> Any:
    def leaky(state: Any) -> dict[str, Any]:
        return {"shouted": state.goal.upper(), "label": "undeclared"}

    return leaky


class LeakyPlugin:
    """A plugin whose kind writes a field it did not declare."""

    @staticmethod
    @hookimpl
    def register_node_kinds(register: Any) -> None:
        register(NodeSpec(name="leaky_kind", factory=leaky_factory, worst_case=CostEstimate(tokens=0),
                          description="shout, and write a label it did not declare",
                          writes={"shouted": str}))


class LeakyKindKit(NodeKindConformance):
    kind = "leaky_kind"
    goal = "ship it"
    expected: ClassVar[dict[str, Any]] = {"shouted": "SHIP IT"}


class LeakyPluginKit(InstalledPluginConformance):
    distribution = "leaky-plugin"
    registers: ClassVar[dict[str, list[str]]] = {"node_kinds": ["leaky_kind", "another_kind"]}


@pytest.fixture
def leaky_host(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with plugin_host(in_process_source(LeakyPlugin, name="leaky-plugin")) as host:
        yield host


def test_the_kit_fails_a_kind_that_writes_what_it_did_not_declare(leaky_host, tmp_path):
    kit = LeakyKindKit()
    spec = leaky_host.registry("node_kinds")["leaky_kind"].item
    graph = kit.write_graph(tmp_path)
    kit.test_admission_admits_a_graph_of_the_kind(spec, graph)
    with pytest.raises(AssertionError, match="label"):
        kit.test_a_graph_of_the_kind_runs_and_ends_with_the_expected_state(spec, graph)


def test_the_plugin_kit_fails_a_plugin_that_does_not_register_what_it_says(leaky_host):
    with pytest.raises(AssertionError, match="another_kind"):
        LeakyPluginKit().test_it_loads_and_registers_exactly_what_it_says(leaky_host)

