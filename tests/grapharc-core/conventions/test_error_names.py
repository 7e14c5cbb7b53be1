"""Every error GraphARC raises on purpose is a named subclass that says what went wrong."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from typer.testing import CliRunner

from grapharc import GraphARC, GraphARCState
from grapharc.cli.main import build_app
from grapharc.runtime.errors import MissingThreadIdError, NoCheckpointerError, RunInputError
from grapharc.runtime.graph import END, START

pytestmark = pytest.mark.smoke

ROOT = Path(__file__).resolve().parents[3]
SOURCES = sorted(ROOT.glob("grapharc-*/src/**/*.py"))


class State(GraphARCState):
    question: str = ""
    answer: str = ""


def compiled(**options):
    graph = GraphARC(State, name="answers")
    graph.add_node("answer", lambda state: {"answer": "42"}, writes={"answer"})
    graph.add_edge(START, "answer")
    graph.add_edge("answer", END)
    return graph.compile(**options)


def bare_raises(path: Path) -> list[int]:
    """Lines of ``path`` that raise ``GraphARCError(...)`` itself rather than a subclass."""
    return [node.lineno for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
            and isinstance(node.exc.func, ast.Name) and node.exc.func.id == "GraphARCError"]


def test_the_sources_are_found():
    assert len(SOURCES) > 100


def test_no_module_raises_the_bare_root_error():
    bare = {str(path.relative_to(ROOT)): lines for path in SOURCES if (lines := bare_raises(path))}
    assert bare == {}


def test_a_checkpointed_run_without_a_thread_id_is_a_missing_thread_id_error():
    with pytest.raises(MissingThreadIdError, match="graph 'answers' has a checkpointer") as caught:
        compiled(checkpointer=InMemorySaver()).invoke({"question": "q"})
    assert isinstance(caught.value, RunInputError) and "thread_id" in caught.value.hint


def test_updating_the_state_of_a_graph_without_a_checkpointer_is_a_no_checkpointer_error():
    with pytest.raises(NoCheckpointerError, match="graph 'answers' has no checkpointer"):
        compiled().update_state({"configurable": {"thread_id": "t"}}, {"answer": "x"})


def test_an_unknown_session_status_filter_is_an_unknown_status_error(tmp_path):
    result = CliRunner().invoke(build_app(), ["session", "list", "--status", "sleeping", "--json",
                                              "--dir", str(tmp_path)])
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "UnknownStatusError"
