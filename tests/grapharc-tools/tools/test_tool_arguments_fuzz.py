"""Every tool, called the way an agent calls it with hostile arguments: wrong types, absurd numbers,
missing and unknown fields, deep nesting, control characters.

Whatever the arguments: the call returns the tool's text or raises a GraphARC error whose message
names what was wrong (never a TypeError, OverflowError or RecursionError from inside), and no file
outside the workspace changes. ``run_command`` is only given harmless programs: the point is its
other arguments, not what a random program does.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tool_names import SEVEN

from grapharc.errors import GraphARCError
from grapharc.harness.executors import LocalExecutor
from grapharc.harness.tools import ToolRegistry

ABSURD = [None, True, -1, 0, 10**30, -(10**30), 2**63, 1e308, -1e308, math.nan, math.inf, -math.inf, 0.5,
          "", " ", "\x00", "x" * 20_000, "inside.txt", "sub", "../secret.txt", "é漢字", [], {}, ["true"]]
PROGRAMS = [["true"], ["echo", "fuzz"], ["cat", "inside.txt"], [], [""], ["\x00"], ["no-such-program-here"],
            ["true", "x" * 5000], [1], [None], "true", ["sleep", "0"]]


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": [value]}
    return value


def values() -> st.SearchStrategy[Any]:
    leaves = st.one_of(st.sampled_from(ABSURD), st.integers(), st.floats(), st.text(max_size=20))
    trees = st.recursive(leaves, lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)), max_leaves=8)
    return st.one_of(trees, st.sampled_from([nested(200), nested(2000)]))


@st.composite
def arguments(draw: st.DrawFn, tool: str, fields: list[str]) -> dict[str, Any]:
    chosen = draw(st.lists(st.sampled_from([*fields, "unexpected"]), unique=True, max_size=len(fields) + 1))
    drawn = {name: draw(values()) for name in chosen}
    if tool == "run_command":
        drawn["argv"] = draw(st.sampled_from(PROGRAMS))
    return drawn


def outside(workspace: Path) -> dict[str, bytes]:
    """Every regular file beside the workspace (not in it), with its content."""
    return {str(path): path.read_bytes() for path in workspace.parent.rglob("*")
            if path.is_file() and not path.is_symlink() and not path.is_relative_to(workspace)}


def test_any_arguments_to_any_tool_run_it_or_are_refused_by_name(tools: ToolRegistry,
                                                                   workspace: Path) -> None:
    (workspace / "inside.txt").write_text("inside\n")
    (workspace / "sub").mkdir()
    executor = LocalExecutor()
    before = outside(workspace)
    schemas = {name: list(tools.get(name).args_model.model_json_schema()["properties"]) for name in SEVEN}

    @settings(max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(data=st.data(), tool=st.sampled_from(SEVEN))
    def call(data: st.DataObject, tool: str) -> None:
        given_arguments = data.draw(arguments(tool, schemas[tool]))
        try:
            result = executor.run(tools.get(tool), given_arguments, workspace=workspace, timeout=30)
        except GraphARCError as refused:
            message = str(refused)
            assert message and "Traceback" not in message and "GraphARC bug" not in message, message
            return
        assert isinstance(result, str | dict), (tool, given_arguments, result)  # run_command: its outcome

    call()
    assert outside(workspace) == before
