"""``NodeSpec`` means one thing: a kind a planner may propose (grapharc.planner.NodeSpec). A node as
declared to the kernel is a ``DeclaredNode``."""

from __future__ import annotations

import ast
from pathlib import Path

from grapharc import GraphARC, GraphARCState
from grapharc.planner import NodeSpec
from grapharc.runtime.node import DeclaredNode

ROOT = Path(__file__).resolve().parents[3]


def test_only_the_planner_defines_a_class_named_node_spec():
    defined = [str(path.relative_to(ROOT)) for path in sorted(ROOT.glob("grapharc-*/src/**/*.py"))
               for node in ast.parse(path.read_text()).body
               if isinstance(node, ast.ClassDef) and node.name == "NodeSpec"]
    assert defined == ["grapharc-core/src/grapharc/planner/registry.py"]
    assert NodeSpec.__module__ == "grapharc.planner.registry"


class State(GraphARCState):
    answer: str = ""


def test_a_graph_keeps_each_added_node_as_a_declared_node():
    graph = GraphARC(State)
    graph.add_node("answer", lambda state: {"answer": "42"}, writes={"answer"})
    declared = graph.nodes["answer"]
    assert isinstance(declared, DeclaredNode) and declared.writes == frozenset({"answer"})
