"""grapharc-postgres uses only its dependencies' public names, and those it builds on are still there:
a new langgraph-checkpoint-postgres that renames or reshapes one fails here, naming itself and its
version, before any fenced write goes wrong."""

from __future__ import annotations

import ast
import inspect
from importlib.metadata import version
from pathlib import Path

import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

import grapharc.postgres
from grapharc.postgres.fencing import FencingAsyncPostgresSaver, FencingPostgresSaver

PACKAGE = Path(grapharc.postgres.__file__).parent
LANGGRAPH = "langgraph-checkpoint-postgres"
FENCING = ((FencingPostgresSaver, PostgresSaver, ("put", "put_writes")),
           (FencingAsyncPostgresSaver, AsyncPostgresSaver, ("aput", "aput_writes")))
"""Each fencing saver, LangGraph's class it extends, and the methods it overrides (and calls)."""


def _named(value: object) -> str:
    return getattr(value, "__name__", "")


def _arguments(function: object) -> list[tuple[str, object]]:
    return [(p.name, p.default) for p in inspect.signature(function).parameters.values()]


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))


def private_imports(path: Path) -> list[str]:
    """The names ``path`` imports from another distribution that are private (a part starting ``_``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and not node.module.startswith("grapharc"):
            found += [f"{node.module}.{alias.name}" for alias in node.names
                      if _private(f"{node.module}.{alias.name}")]
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names
                      if not alias.name.startswith("grapharc") and _private(alias.name)]
    return found


def test_grapharc_postgres_imports_no_private_name_of_another_distribution():
    assert {path.name: private_imports(path) for path in PACKAGE.glob("*.py") if private_imports(path)} == {}


@pytest.mark.parametrize(("ours", "theirs", "methods"), FENCING, ids=_named)
def test_the_fencing_savers_override_no_private_method_of_langgraphs(ours, theirs, methods):
    overridden = sorted(name for name in vars(ours) if _private(name) and hasattr(theirs, name))
    assert not overridden, (f"{LANGGRAPH} {version(LANGGRAPH)}: {ours.__name__} overrides "
                            f"{theirs.__name__}'s private {overridden}")


@pytest.mark.parametrize(("ours", "theirs", "methods"), FENCING, ids=_named)
def test_langgraphs_savers_still_have_the_public_names_the_fencing_savers_build_on(ours, theirs, methods):
    """The writes fencing overrides take the same arguments; the constructor takes a connection (or
    pool) first and a serializer by name; a saver keeps its lock in ``lock``."""
    installed = f"{LANGGRAPH} {version(LANGGRAPH)}"
    for method in methods:
        assert hasattr(theirs, method), f"{installed}: {theirs.__name__}.{method} is gone"
        theirs_take, ours_take = _arguments(getattr(theirs, method)), _arguments(getattr(ours, method))
        assert ours_take == theirs_take, \
            f"{installed}: {theirs.__name__}.{method} now takes {theirs_take}, the fencing saver {ours_take}"
    constructor = list(inspect.signature(theirs.__init__).parameters)
    assert constructor[:2] == ["self", "conn"] and "serde" in constructor, \
        f"{installed}: {theirs.__name__}({', '.join(constructor[1:])}) takes no conn first or serde by name"
    assert "lock" in theirs.__annotations__, f"{installed}: {theirs.__name__} keeps no lock attribute"
