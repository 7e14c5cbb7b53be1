"""grapharc-postgres's modules import one another without a circle, counting the imports made
inside functions too: a lazy import only hides a circle from the interpreter, not from a reader."""

from __future__ import annotations

import ast
from pathlib import Path

import grapharc.postgres

PACKAGE = Path(grapharc.postgres.__file__).parent


def imported(path: Path) -> set[str]:
    """The grapharc.postgres modules ``path`` imports, wherever in the file the import stands."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {name for name in names if name.startswith("grapharc.postgres.")}


def module_graph() -> dict[str, set[str]]:
    modules = {f"grapharc.postgres.{path.stem}": path for path in PACKAGE.glob("*.py")
               if path.stem != "__init__"}
    return {name: imported(path) & set(modules) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each import circle found by a depth-first walk, as the modules along it."""
    found: list[list[str]] = []
    done: set[str] = set()

    def walk(module: str, trail: list[str]) -> None:
        if module in trail:
            found.append([*trail[trail.index(module):], module])
            return
        if module in done:
            return
        for target in sorted(graph[module]):
            walk(target, [*trail, module])
        done.add(module)

    for module in sorted(graph):
        walk(module, [])
    return found


def test_no_module_of_grapharc_postgres_imports_itself_round_a_circle():
    assert circles(module_graph()) == []


def test_the_circle_finder_sees_a_circle_through_a_lazy_import():
    assert circles({"a": {"b"}, "b": {"a"}}) == [["a", "b", "a"]]
